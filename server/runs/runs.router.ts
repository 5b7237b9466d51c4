import { tracked } from "@trpc/server";
import { z } from "zod";
import { PageInput } from "../../shared/api";
import { PermissionDecision } from "../../shared/runs";
import { RunStatus } from "../../shared/statuses";
import { publicProcedure, router } from "../trpc/init";

const runId = z.string().min(1);

export const RunsInput = {
  prepare: z
    .object({
      runId: runId.optional(),
      strategyPath: z.string().min(1).optional(),
      modelOverride: z.string().min(1).optional(),
      cwd: z.string().min(1).optional(),
      manifestPath: z.string().min(1).optional(),
      /** Overrides the strategy's `budget` for this run (each segment). */
      budget: z.object({ tokens: z.number().int().positive().optional(), usd: z.number().positive().optional() }).strict().optional(),
    })
    .strict()
    .refine((v) => v.runId || v.strategyPath, { message: "needs runId or strategyPath", path: ["strategyPath"] }),
  start: z.object({ runId, input: z.string().optional() }).strict(),
  continue: z.object({ runId, input: z.string() }).strict(),
  runId: z.object({ runId }).strict(),
  steer: z.object({ runId, text: z.string().min(1) }).strict(),
  respond: z
    .object({ runId, requestId: z.string().min(1), text: z.string().optional(), decision: PermissionDecision.optional() })
    .strict()
    .refine((v) => v.text !== undefined || v.decision !== undefined, { message: "needs text (input, question) or decision (permission)", path: ["text"] }),
  updatePolicy: z
    .object({ runId, tool: z.string().optional(), mode: z.enum(["read", "write"]), allow: z.array(z.string()).optional(), deny: z.array(z.string()).optional(), default: z.enum(["allow", "deny", "ask"]).optional() })
    .strict(),
  list: z
    .object({
      cwd: z.string().optional(),
      /** Only runs in these statuses. */
      status: z.array(RunStatus).min(1).optional(),
      /** Only runs whose strategy name, strategy path or directory contains this (any case). */
      q: z.string().max(200).optional(),
      ...PageInput,
    })
    .strict()
    .default({}),
  counts: z.object({ cwd: z.string().optional(), q: z.string().max(200).optional() }).strict().default({}),
  timeline: z.object({ runId, afterId: z.number().int().nonnegative().default(0), limit: z.number().int().min(1).max(5000).default(1000) }).strict(),
  onEvents: z.object({ runId, lastEventId: z.string().regex(/^\d+$/).nullish() }).strict(),
};

/** Strategy runs over tRPC: the same engine as the Comma protocol on /ws. */
export const runsRouter = router({
  prepare: publicProcedure.input(RunsInput.prepare).mutation(async ({ input, ctx }) => {
    const { run, attached } = await ctx.runs.prepare(input);
    const s = run.config.strategy;
    return { runId: run.runId, strategyName: s.name, agents: Object.keys(s.agents), flowTree: s.flow, attached, continuation: run.continuation, warnings: run.warnings, conversation: await ctx.runs.conversation(run) };
  }),
  start: publicProcedure.input(RunsInput.start).mutation(async ({ input, ctx }) => {
    const run = await ctx.runs.start(input.runId, input.input);
    return { runId: run.runId, segment: run.segment };
  }),
  continue: publicProcedure.input(RunsInput.continue).mutation(async ({ input, ctx }) => {
    const run = await ctx.runs.continue(input.runId, input.input);
    return { runId: run.runId, segment: run.segment };
  }),
  stop: publicProcedure.input(RunsInput.runId).mutation(async ({ input, ctx }) => {
    await ctx.runs.stop(input.runId);
    return { runId: input.runId, stopped: true };
  }),
  steer: publicProcedure.input(RunsInput.steer).mutation(async ({ input, ctx }) => {
    await ctx.runs.steer(input.runId, input.text);
    return { queued: true };
  }),
  respond: publicProcedure.input(RunsInput.respond).mutation(async ({ input, ctx }) => {
    const request = await ctx.runs.respond(input.runId, input.requestId, { text: input.text, decision: input.decision });
    return { answered: request.requestId, kind: request.kind };
  }),
  updatePolicy: publicProcedure.input(RunsInput.updatePolicy).mutation(async ({ input, ctx }) => {
    const { runId: id, ...change } = input;
    return { policies: await ctx.runs.updatePolicy(id, change) };
  }),
  /** A page of runs, newest first: `{ items, nextCursor }` (keyset paging, see PageInput). */
  list: publicProcedure.input(RunsInput.list).query(({ input, ctx }) => {
    const { limit, cursor, direction: _direction, ...filter } = input;
    return ctx.runs.list(filter, { limit, cursor });
  }),
  /** How many runs in all and per status, without reading them (the list's status filters). */
  counts: publicProcedure.input(RunsInput.counts).query(({ input, ctx }) => ctx.runs.counts(input)),
  get: publicProcedure.input(RunsInput.runId).query(({ input, ctx }) => ctx.runs.get(input.runId)),
  timeline: publicProcedure.input(RunsInput.timeline).query(async ({ input, ctx }) => ({ events: await ctx.runs.timeline(input.runId, input.afterId, input.limit), lastId: ctx.bus.lastId })),
  /** The run's events: its stored timeline after lastEventId, then live (replays, unlike /ws). */
  onEvents: publicProcedure.input(RunsInput.onEvents).subscription(async function* ({ input, ctx, signal }) {
    ctx.stats.sseOpened();
    try {
      const afterId = input.lastEventId ? Number(input.lastEventId) : 0;
      for await (const batch of ctx.bus.subscribeBatches({ afterId, scope: { kind: "run", id: input.runId }, signal })) {
        yield tracked(String(batch[batch.length - 1]!.id), batch);
      }
    } finally {
      ctx.stats.sseClosed();
    }
  }),
});
