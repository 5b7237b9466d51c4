import type { inferRouterOutputs } from "@trpc/server";
import { z } from "zod";
import { PendingRequest, PermissionDecision, RunError, Usage } from "../../../shared/runs";
import { RunStatus } from "../../../shared/statuses";
import { StrategySource } from "../../../shared/strategy";
import type { AppRouter } from "../../trpc/router";
import { clip, defineTool, page, type ToolContext, type ToolExtra } from "../tool-kit";
import { timeoutSeconds, waitUntil } from "../waiting";
import { ID, LONG_TEXT, OFFSET, PATH, SHORT_TEXT } from "./limits";

/** Strategy runs: list strategies, start, watch, continue, stop, answer what a run asks. */

type RunDetail = inferRouterOutputs<AppRouter>["runs"]["get"];

const RESULT_PAGE = 8_000;

const RunView = z.object({
  runId: z.string(),
  status: RunStatus,
  strategyName: z.string(),
  strategyPath: z.string(),
  cwd: z.string(),
  segment: z.number().describe("1 for the first start, +1 for every continue_run"),
  startedAt: z.string().nullable(),
  completedAt: z.string().nullable(),
  input: z.string().nullable().describe("The input of the latest segment (cut to 2,000 characters)"),
  result: z.string().nullable().describe(`The final output, ${RESULT_PAGE} characters from resultOffset; read on with get_run {resultOffset: nextResultOffset}`),
  resultOffset: z.number(),
  resultChars: z.number(),
  nextResultOffset: z.number().nullable(),
  error: RunError.nullable(),
  usage: Usage,
  pendingRequests: z.array(PendingRequest).describe("What the run waits on a human for: answer each with answer_run_request"),
  agents: z.array(z.string()),
});
type RunView = z.input<typeof RunView>;

const RunAnswer = z.object({
  status: RunStatus.describe('The run\'s status, except "pending" when a wait timed out while it still works: call get_run with wait again'),
  needsHuman: z.boolean().describe("The run waits on an answer: see run.pendingRequests and answer_run_request"),
  run: RunView,
  waitedMs: z.number().optional(),
});

function runView(r: RunDetail, resultOffset = 0): RunView {
  const result = r.result === null ? null : page(r.result, resultOffset, RESULT_PAGE);
  return {
    runId: r.runId,
    status: r.status,
    strategyName: r.strategyName,
    strategyPath: r.strategyPath,
    cwd: r.cwd,
    segment: r.segment,
    startedAt: r.startedAt,
    completedAt: r.completedAt,
    input: r.input === null ? null : clip(r.input, 2000),
    result: result?.text ?? null,
    resultOffset: result?.offset ?? 0,
    resultChars: result?.totalChars ?? 0,
    nextResultOffset: result?.nextOffset ?? null,
    error: r.error,
    usage: r.usage,
    pendingRequests: r.pendingRequests,
    agents: r.agents,
  };
}

const ended = (r: RunDetail) => r.status !== "running" && r.status !== "pending";

/** The run now, or after waiting until it ends, asks a human, or the timeout passes. */
async function answerOf(ctx: ToolContext, extra: ToolExtra, runId: string, wait: { on: boolean; seconds: number }, resultOffset = 0) {
  const read = () => ctx.yard.runs.get.query({ runId });
  const waited = wait.on
    ? await waitUntil(read, (r) => ended(r) || r.pendingRequests.length > 0, { timeoutMs: wait.seconds * 1000, extra, what: `run ${runId}` })
    : { value: await read(), timedOut: false, waitedMs: undefined };
  const r = waited.value;
  const needsHuman = r.pendingRequests.length > 0;
  const status = waited.timedOut && !ended(r) && !needsHuman ? ("pending" as const) : r.status;
  const data = { status, needsHuman, run: runView(r, resultOffset), ...(waited.waitedMs !== undefined ? { waitedMs: waited.waitedMs } : {}) };
  return { data, text: runLine(r, status, needsHuman) };
}

function runLine(r: RunDetail, status: string, needsHuman: boolean): string {
  const head = `Run ${r.runId} (${r.strategyName}): ${status}`;
  if (status === "pending") return `${head}; still ${r.status}: call get_run with wait to keep waiting`;
  if (needsHuman) return `${head}; waits on ${r.pendingRequests.map((p) => `${p.kind} ${p.requestId}`).join(", ")}: answer with answer_run_request`;
  if (r.error) return `${head}: ${r.error.code}: ${clip(r.error.message, 300)}`;
  if (r.result !== null) return `${head}: ${clip(r.result, 300)}`;
  return head;
}

const waitArgs = {
  wait: z.boolean().default(false).describe("Wait for the run to end or to ask a human (at most timeoutSeconds)"),
  timeoutSeconds: timeoutSeconds(50),
};

export const listStrategies = defineTool({
  name: "list_strategies",
  title: "List strategies",
  description:
    "List the strategies that can be run (files in <cwd>/strategies, <cwd>/.comma/strategies, the user's home and the bundled examples) and the 10 most recent runs. Use a strategy's id or path with start_run.",
  input: z.object({ cwd: PATH.optional().describe("Directory whose strategies to list (default: the MCP client's, else the server's working directory)") }),
  output: z.object({
    strategies: z.array(z.object({ id: z.string(), name: z.string(), description: z.string().optional(), path: z.string(), source: StrategySource, valid: z.boolean(), error: z.string().optional() })),
    recentRuns: z.array(z.object({ runId: z.string(), strategyName: z.string(), status: RunStatus, startedAt: z.string(), completedAt: z.string().nullable() })),
  }),
  annotations: { readOnlyHint: true },
  async run(args, ctx) {
    const cwd = args.cwd ?? ctx.cwd;
    const [strategies, runs] = await Promise.all([ctx.yard.strategies.list.query(cwd ? { cwd } : {}), ctx.yard.runs.list.query({ limit: 10 })]);
    const list = strategies.map((s) => ({ id: s.id, name: s.name, ...(s.description ? { description: clip(s.description, 300) } : {}), path: s.path, source: s.source, valid: s.valid, ...(s.error ? { error: clip(s.error, 500) } : {}) }));
    const recentRuns = runs.items.map((r) => ({ runId: r.runId, strategyName: r.strategyName, status: r.status, startedAt: r.startedAt, completedAt: r.completedAt }));
    return { data: { strategies: list, recentRuns }, text: `${list.length} strategies: ${list.map((s) => s.id).join(", ")}` };
  },
});

export const startRun = defineTool({
  name: "start_run",
  title: "Start a strategy run",
  description:
    'Start a strategy run (a tree of LLM agents) with an input. Returns its runId at once, or with wait: true waits until it ends or asks a human, at most timeoutSeconds (then status "pending": call get_run with wait to keep waiting).',
  input: z.object({
    strategy: PATH.describe("The strategy's id (from list_strategies) or its file path"),
    input: LONG_TEXT.optional().describe("The run's input message"),
    cwd: PATH.optional().describe("The run's working directory (default: the MCP client's, else the server's)"),
    model: SHORT_TEXT.optional().describe("Run every agent on this model instead (e.g. mock/echo, anthropic/claude-sonnet-4-5)"),
    budget: z.object({ tokens: z.number().int().positive().optional(), usd: z.number().positive().optional() }).strict().optional().describe("Stop the run with BUDGET_EXCEEDED past this"),
    ...waitArgs,
  }),
  output: RunAnswer,
  async run(args, ctx, extra) {
    const cwd = args.cwd ?? ctx.cwd;
    const prepared = await ctx.yard.runs.prepare.mutate({
      strategyPath: args.strategy,
      ...(cwd ? { cwd } : {}),
      ...(args.model ? { modelOverride: args.model } : {}),
      ...(args.budget ? { budget: args.budget } : {}),
    });
    await ctx.yard.runs.start.mutate({ runId: prepared.runId, ...(args.input !== undefined ? { input: args.input } : {}) });
    return answerOf(ctx, extra, prepared.runId, { on: args.wait, seconds: args.timeoutSeconds });
  },
});

export const getRun = defineTool({
  name: "get_run",
  title: "Get a run",
  description:
    'A run\'s status, result (paged by resultOffset), error and pending requests. With wait: true waits until it ends or asks a human, at most timeoutSeconds (then status "pending": call again).',
  input: z.object({ runId: ID, ...waitArgs, resultOffset: OFFSET.default(0).describe("Where to start reading the result (nextResultOffset of the last page)") }),
  output: RunAnswer,
  annotations: { readOnlyHint: true },
  run: (args, ctx, extra) => answerOf(ctx, extra, args.runId, { on: args.wait, seconds: args.timeoutSeconds }, args.resultOffset),
});

export const continueRun = defineTool({
  name: "continue_run",
  title: "Continue a finished run",
  description: "Send a follow-up input to a run that ended (completed, error or cancelled): its agents keep their conversations. wait as in start_run.",
  input: z.object({ runId: ID, input: LONG_TEXT.describe("The follow-up message"), ...waitArgs }),
  output: RunAnswer,
  async run(args, ctx, extra) {
    await ctx.yard.runs.prepare.mutate({ runId: args.runId });
    await ctx.yard.runs.continue.mutate({ runId: args.runId, input: args.input });
    return answerOf(ctx, extra, args.runId, { on: args.wait, seconds: args.timeoutSeconds });
  },
});

export const stopRun = defineTool({
  name: "stop_run",
  title: "Stop a run",
  description: "Stop a running run (it ends cancelled; its model calls and commands are aborted). Stopping an ended run changes nothing.",
  input: z.object({ runId: ID }),
  output: RunAnswer,
  annotations: { destructiveHint: true, idempotentHint: true },
  async run(args, ctx, extra) {
    await ctx.yard.runs.stop.mutate({ runId: args.runId });
    return answerOf(ctx, extra, args.runId, { on: false, seconds: 0 });
  },
});

export const answerRunRequest = defineTool({
  name: "answer_run_request",
  title: "Answer a run's request",
  description:
    "Answer what a run waits on (get_run's pendingRequests): an input or question request takes text; a permission request takes decision (allow, deny, allow-session, deny-session).",
  input: z.object({
    runId: ID,
    requestId: ID,
    text: LONG_TEXT.optional().describe("The answer to an input or question request"),
    decision: PermissionDecision.optional().describe("The decision on a permission request"),
  }),
  output: z.object({ runId: z.string(), requestId: z.string(), kind: z.enum(["input", "question", "permission"]), run: RunView }),
  async run(args, ctx) {
    const answered = await ctx.yard.runs.respond.mutate({
      runId: args.runId,
      requestId: args.requestId,
      ...(args.text !== undefined ? { text: args.text } : {}),
      ...(args.decision ? { decision: args.decision } : {}),
    });
    const r = await ctx.yard.runs.get.query({ runId: args.runId });
    return { data: { runId: args.runId, requestId: answered.answered, kind: answered.kind, run: runView(r) }, text: `Answered the ${answered.kind} request ${answered.answered} of run ${args.runId}` };
  },
});

export const RUN_TOOLS = [listStrategies, startRun, getRun, continueRun, stopRun, answerRunRequest];
