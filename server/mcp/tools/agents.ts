import { z } from "zod";
import { AgentGrant, AgentMode, PermissionMode, type AgentInfo } from "../../../shared/agents";
import { AgentStatus } from "../../../shared/statuses";
import { clip, defineTool } from "../tool-kit";
import { timeoutSeconds, waitUntil } from "../waiting";
import { agentBrief, AgentBrief, agentLine } from "./agent-views";
import { ID, MESSAGE, PATH, SHORT_TEXT } from "./limits";

/** CLI coding agents: spawn, list, read, talk to, stop, wait for. */

const AGENT_REF = ID.describe("The agent's id or alias");
const PROVIDERS = "claude, codex, gemini, cursor-agent, opencode, aider, amp, or fake (a scripted stand-in that needs no key)";
const LABEL = z.string().min(1).max(200);

export const spawnAgent = defineTool({
  name: "spawn_agent",
  title: "Spawn a coding agent",
  description:
    "Start a CLI coding agent on a task in its own git worktree (branch switchyard/<alias>) of a repository. Returns at once; follow it with wait_for_agent, agent_output, get_agent. Its work lands on its branch: see agent_diff, merge_agent.",
  input: z.object({
    provider: SHORT_TEXT.describe(`Which CLI: ${PROVIDERS}`),
    prompt: MESSAGE.describe("The task"),
    repo: PATH.optional().describe("A directory inside the git repository to work on (default: the MCP client's, else the server's working directory), or a git URL (https://, ssh://, git://, user@host:path) the agent's machine clones and pushes its branch to"),
    init: z.boolean().optional().describe("When repo is not in a git repository, make it one (its files in a first commit) instead of failing with REPO_NOT_GIT"),
    baseRef: SHORT_TEXT.optional().describe("Branch or commit the agent's branch starts from (default: the repository's HEAD)"),
    mode: AgentMode.default("execute").describe("execute (do it), plan, discuss, refine or review"),
    permissionMode: PermissionMode.default("acceptEdits").describe("acceptEdits (edits and its git commits allowed), ask (each other tool call waits for a human), bypass (everything allowed)"),
    model: SHORT_TEXT.optional().describe("The CLI's model (default: the CLI's own)"),
    alias: z.string().regex(/^[a-z0-9][a-z0-9-]{0,62}$/, "lowercase letters, digits and dashes").optional().describe("A readable name (default: generated)"),
    taskId: LABEL.optional().describe("A label: the task it works on (ask can target it)"),
    phaseId: LABEL.optional().describe("A label: the phase it belongs to (ask can target it)"),
    account: SHORT_TEXT.optional().describe("Run on this registered account (label or id)"),
    grants: z
      .array(AgentGrant)
      .max(AgentGrant.options.length)
      .optional()
      .describe('Rights its token gets beyond itself and the agents it spawns (default none): "daemons" lets it use list_daemons, trigger_daemon and daemon_snapshot. An agent may give only grants it has itself.'),
  }),
  output: z.object({ agent: AgentBrief }),
  async run(args, ctx) {
    const repo = args.repo ?? ctx.cwd;
    const agent = await ctx.yard.agents.spawn.mutate({ ...args, ...(repo ? { repo } : {}) });
    return { data: { agent: agentBrief(agent) }, text: `Spawned agent ${agent.alias} (${agent.id}) on branch ${agent.branch ?? "-"}: ${agent.status}` };
  },
});

const AgentRow = z.object({
  id: z.string(),
  alias: z.string(),
  provider: z.string(),
  status: AgentStatus,
  needsYou: z.boolean(),
  task: z.string().describe("Cut to 160 characters"),
  branch: z.string().nullable(),
  result: z.string().nullable().describe("Cut to 200 characters"),
  taskId: z.string().nullable(),
  phaseId: z.string().nullable(),
  updatedAt: z.string(),
});

const row = (a: AgentInfo): z.infer<typeof AgentRow> => ({
  id: a.id,
  alias: a.alias,
  provider: a.provider,
  status: a.status,
  needsYou: a.needsYou,
  task: clip(a.task, 160),
  branch: a.branch,
  result: a.result === null ? null : clip(a.result, 200),
  taskId: a.taskId,
  phaseId: a.phaseId,
  updatedAt: a.updatedAt,
});

export const listAgents = defineTool({
  name: "list_agents",
  title: "List coding agents",
  description: "List CLI coding agents, newest first, in pages (limit; pass nextCursor back as cursor for the next page, with the same filters), optionally filtered by status or by task/phase label.",
  input: z.object({
    status: z.array(AgentStatus).max(20).optional().describe("Only agents in these statuses"),
    taskId: LABEL.optional(),
    phaseId: LABEL.optional(),
    cursor: z.string().min(1).max(500).optional().describe("The nextCursor of the page before (omitted: the first page)"),
    limit: z.number().int().min(1).max(200).default(50),
  }),
  output: z.object({ total: z.number(), needYou: z.number(), nextCursor: z.string().nullable(), agents: z.array(AgentRow) }),
  annotations: { readOnlyHint: true },
  async run(args, ctx) {
    const labels = { ...(args.taskId ? { taskId: args.taskId } : {}), ...(args.phaseId ? { phaseId: args.phaseId } : {}) };
    const [page, counts] = await Promise.all([
      ctx.yard.agents.list.query({ ...labels, ...(args.status ? { status: args.status } : {}), limit: args.limit, ...(args.cursor ? { cursor: args.cursor } : {}) }),
      ctx.yard.agents.counts.query(labels),
    ]);
    const total = args.status ? args.status.reduce((sum, s) => sum + (counts.byStatus[s] ?? 0), 0) : counts.total;
    return {
      data: { total, needYou: counts.needsYou, nextCursor: page.nextCursor, agents: page.items.map(row) },
      text: `${total} agents${counts.needsYou ? ` (${counts.needsYou} need you)` : ""}; showing ${page.items.length}${page.nextCursor ? ", more with cursor" : ""}`,
    };
  },
});

export const getAgent = defineTool({
  name: "get_agent",
  title: "Get a coding agent",
  description: "One agent: status, whether it needs a human, its pending questions, result, branch, usage.",
  input: z.object({ agentId: AGENT_REF }),
  output: z.object({ agent: AgentBrief }),
  annotations: { readOnlyHint: true },
  async run(args, ctx) {
    const agent = await ctx.yard.agents.get.query({ agentId: args.agentId });
    return { data: { agent: agentBrief(agent) }, text: agentLine(agent) };
  },
});

export const messageAgent = defineTool({
  name: "message_agent",
  title: "Message a coding agent",
  description:
    "Send a follow-up to an agent on the same session: delivered now when it is not running (it resumes), else queued until its current run ends (delivered: \"queued\").",
  input: z.object({ agentId: AGENT_REF, text: MESSAGE.describe("The follow-up") }),
  output: z.object({ delivered: z.enum(["now", "queued"]), agent: AgentBrief }),
  async run(args, ctx) {
    const r = await ctx.yard.agents.message.mutate({ agentId: args.agentId, text: args.text });
    return { data: { delivered: r.delivered, agent: agentBrief(r.agent) }, text: `Message ${r.delivered === "now" ? "delivered" : "queued"}: ${agentLine(r.agent)}` };
  },
});

export const answerAgent = defineTool({
  name: "answer_agent",
  title: "Answer a coding agent's questions",
  description: "Answer the questions of an agent waiting_for_input (get_agent's pendingQuestions), by question id; it resumes on the same session.",
  input: z.object({
    agentId: AGENT_REF,
    answers: z
      .record(ID, MESSAGE)
      .refine((a) => Object.keys(a).length > 0, "give at least one answer")
      .refine((a) => Object.keys(a).length <= 100, "at most 100 answers")
      .describe('Question id -> answer, e.g. {"q1": "Use PostgreSQL"}'),
  }),
  output: z.object({ agent: AgentBrief }),
  async run(args, ctx) {
    const agent = await ctx.yard.agents.resume.mutate({ agentId: args.agentId, answers: args.answers });
    return { data: { agent: agentBrief(agent) }, text: `Answered: ${agentLine(agent)}` };
  },
});

export const stopAgent = defineTool({
  name: "stop_agent",
  title: "Stop a coding agent",
  description: "Stop an agent's CLI (its process group is killed). Its worktree and branch are kept; message_agent resumes it later. cascade: also stop the agents it spawned that are still working.",
  input: z.object({ agentId: AGENT_REF, cascade: z.boolean().optional().describe("also stop the agents it spawned (and theirs); default false") }),
  output: z.object({ agent: AgentBrief }),
  annotations: { destructiveHint: true, idempotentHint: true },
  async run(args, ctx) {
    const agent = await ctx.yard.agents.stop.mutate({ agentId: args.agentId, ...(args.cascade ? { cascade: true } : {}) });
    return { data: { agent: agentBrief(agent) }, text: agentLine(agent) };
  },
});

/** An agent that stopped working for now: done, asking, ended, or blocked on a human's approval. */
const SETTLED = new Set<string>(["idle", "waiting_for_input", "stopped", "crashed", "interrupted"]);
const settled = (a: AgentInfo) => SETTLED.has(a.status) || a.needsYou;

export const waitForAgent = defineTool({
  name: "wait_for_agent",
  title: "Wait for a coding agent",
  description:
    'Wait until an agent is idle (done), waiting_for_input (it asks: answer_agent), needs a tool approval, stopped or crashed, at most timeoutSeconds; then status "pending" (it still works): call again.',
  input: z.object({ agentId: AGENT_REF, timeoutSeconds: timeoutSeconds(50) }),
  output: z.object({
    status: z.union([AgentStatus, z.literal("pending")]).describe('The agent\'s status, or "pending" when the timeout passed while it still works'),
    agent: AgentBrief,
    waitedMs: z.number(),
  }),
  annotations: { readOnlyHint: true },
  async run(args, ctx, extra) {
    const waited = await waitUntil(() => ctx.yard.agents.get.query({ agentId: args.agentId }), settled, { timeoutMs: args.timeoutSeconds * 1000, extra, what: `agent ${args.agentId}` });
    const a = waited.value;
    const status = waited.timedOut && !settled(a) ? ("pending" as const) : a.status;
    const text = status === "pending" ? `Agent ${a.alias} still ${a.status} after ${Math.round(waited.waitedMs / 1000)} s: call wait_for_agent again` : agentLine(a);
    return { data: { status, agent: agentBrief(a), waitedMs: waited.waitedMs }, text };
  },
});

export const AGENT_TOOLS = [spawnAgent, listAgents, getAgent, messageAgent, answerAgent, stopAgent, waitForAgent];
