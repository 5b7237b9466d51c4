import { z } from "zod";
import { AgentStreamEvent, MergeStrategy } from "../../../shared/agents";
import { defineTool } from "../tool-kit";
import { ID, OFFSET, SHORT_TEXT } from "./limits";

/** What an agent did: its output (normalized events, paged), its diff (paged), and merging it. */

const AGENT_REF = ID.describe("The agent's id or alias");
/** A page's structured content stays under this many characters of JSON (lines past it go to the next page). */
const PAGE_BUDGET = 48_000;

const KINDS = AgentStreamEvent.options.map((o) => o.shape.kind.value);
const EventKind = z.enum(KINDS as [AgentStreamEvent["kind"], ...AgentStreamEvent["kind"][]]);

export const agentOutput = defineTool({
  name: "agent_output",
  title: "Read a coding agent's output",
  description:
    "An agent's output as normalized events (text, thinking, tool_call, tool_result, result, error, ...), by line: the last `limit` lines, or `limit` lines from `fromLine`. Long fields are cut to maxFieldChars; read on with fromLine = nextFromLine (older: prevFromLine).",
  input: z.object({
    agentId: AGENT_REF,
    fromLine: OFFSET.optional().describe("First line (0-based); omitted: the last `limit` lines"),
    limit: z.number().int().min(1).max(200).default(50).describe("Lines to read (1-200)"),
    kinds: z.array(EventKind).min(1).max(KINDS.length).optional().describe("Only these event kinds (lines left without events are skipped)"),
    maxFieldChars: z.number().int().min(256).max(16_000).default(2000).describe("Longest text kept in one field"),
  }),
  output: z.object({
    agentId: z.string(),
    totalLines: z.number(),
    fromLine: z.number(),
    toLine: z.number().describe("One past the last line read"),
    nextFromLine: z.number().nullable().describe("Where the next page starts (null: nothing newer yet)"),
    prevFromLine: z.number().nullable().describe("Where the page before this one starts (null: this is the start)"),
    truncated: z.boolean().describe("A field was cut, or the page stopped early to stay small"),
    lines: z.array(z.object({ line: z.number(), session: z.number(), events: z.array(AgentStreamEvent) })),
  }),
  annotations: { readOnlyHint: true },
  async run(args, ctx) {
    const out = await ctx.yard.agents.output.query({
      agentId: args.agentId,
      ...(args.fromLine !== undefined ? { fromLine: args.fromLine } : {}),
      limit: args.limit,
      format: "events",
      maxFieldBytes: args.maxFieldChars,
    });
    const kinds = args.kinds ? new Set<string>(args.kinds) : null;
    const lines: Array<{ line: number; session: number; events: AgentStreamEvent[] }> = [];
    let size = 0;
    let truncated = false;
    let toLine = out.fromLine;
    for (const l of out.lines) {
      const events = kinds ? l.events.filter((e) => kinds.has(e.kind)) : l.events;
      const entry = { line: l.line, session: l.session, events };
      const bytes = events.length ? JSON.stringify(entry).length : 0;
      if (lines.length > 0 && size + bytes > PAGE_BUDGET) {
        truncated = true;
        break;
      }
      size += bytes;
      if (l.truncated) truncated = true;
      if (events.length) lines.push(entry);
      toLine = l.line + 1;
    }
    const prev = out.fromLine > 0 ? Math.max(0, out.fromLine - args.limit) : null;
    return {
      data: { agentId: out.agentId, totalLines: out.totalLines, fromLine: out.fromLine, toLine, nextFromLine: toLine < out.totalLines ? toLine : null, prevFromLine: prev, truncated, lines },
      text: `Lines ${out.fromLine}-${toLine} of ${out.totalLines} of agent ${out.agentId} (${lines.length} with events)`,
    };
  },
});

export const agentDiff = defineTool({
  name: "agent_diff",
  title: "An agent's changes",
  description:
    "What an agent changed against its base: the files with +/- counts, commits ahead, whether uncommitted work is left, and the unified diff in pages of maxChars (read on with offset = nextOffset). Works after its worktree was cleaned up (from its branch).",
  input: z.object({
    agentId: AGENT_REF,
    offset: OFFSET.default(0).describe("Where to start reading the patch"),
    maxChars: z.number().int().min(1000).max(100_000).default(20_000).describe("Patch characters per page"),
  }),
  output: z.object({
    agentId: z.string(),
    branch: z.string().nullable(),
    baseRef: z.string().nullable(),
    dirty: z.boolean().describe("Uncommitted work is in its worktree"),
    commitsAhead: z.number(),
    commitsSinceMerge: z.number().nullable(),
    insertions: z.number(),
    deletions: z.number(),
    files: z.array(z.object({ path: z.string(), status: z.string(), insertions: z.number(), deletions: z.number() })).describe("At most 500 files"),
    patch: z.string(),
    offset: z.number(),
    nextOffset: z.number().nullable().describe("Where the next page starts (null: the end of the patch)"),
  }),
  annotations: { readOnlyHint: true },
  async run(args, ctx) {
    const agent = await ctx.yard.agents.get.query({ agentId: args.agentId });
    const [changes, diff] = await Promise.all([
      ctx.yard.agents.changes.query({ agentId: agent.id }),
      // one character past the page tells whether there is more
      ctx.yard.agents.diff.query({ agentId: agent.id, maxBytes: Math.min(16 * 1024 * 1024, Math.max(1024, args.offset + args.maxChars + 1)) }),
    ]);
    const start = Math.min(args.offset, diff.patch.length);
    const patch = diff.patch.slice(start, start + args.maxChars);
    const end = start + patch.length;
    const more = end < diff.patch.length;
    return {
      data: {
        agentId: agent.id,
        branch: agent.branch,
        baseRef: agent.baseRef,
        dirty: changes.dirty,
        commitsAhead: changes.commitsAhead,
        commitsSinceMerge: changes.commitsSinceMerge ?? null,
        insertions: changes.insertions,
        deletions: changes.deletions,
        files: changes.files.slice(0, 500),
        patch,
        offset: start,
        nextOffset: more ? end : null,
      },
      text: `${changes.files.length} file${changes.files.length === 1 ? "" : "s"} changed (+${changes.insertions} -${changes.deletions}), ${changes.commitsAhead} commits ahead${changes.dirty ? ", uncommitted work" : ""}; patch ${start}-${end}${more ? " (more: offset " + end + ")" : ""}`,
    };
  },
});

export const mergeAgent = defineTool({
  name: "merge_agent",
  title: "Merge an agent's branch",
  description:
    "Merge a finished agent's branch into a local branch (default: the one it started from) with merge, squash or rebase. A conflict changes nothing and names the files; merging again brings in only new commits.",
  input: z.object({
    agentId: AGENT_REF,
    into: SHORT_TEXT.optional().describe("Target branch (default: the agent's base branch)"),
    strategy: MergeStrategy.default("merge"),
  }),
  output: z.object({
    merged: z.boolean(),
    into: z.string(),
    branch: z.string(),
    commit: z.string().nullable().describe("The commit that landed on `into`"),
    head: z.string().nullable(),
    commits: z.number(),
    strategy: MergeStrategy,
    reason: z.string().optional().describe("Why nothing was merged"),
  }),
  annotations: { destructiveHint: false },
  async run(args, ctx) {
    const r = await ctx.yard.agents.merge.mutate({ agentId: args.agentId, strategy: args.strategy, ...(args.into ? { into: args.into } : {}) });
    const text = r.merged ? `Merged ${r.commits} commits of ${r.branch} into ${r.into} (${r.strategy}) as ${r.commit?.slice(0, 12)}` : `Nothing merged into ${r.into}: ${r.reason ?? ""}`;
    return { data: r, text };
  },
});

export const AGENT_WORK_TOOLS = [agentOutput, agentDiff, mergeAgent];
