import { tracked } from "@trpc/server";
import { z } from "zod";
import { AgentStatus } from "../../shared/statuses";
import { ApprovalStatus, MergeStrategy, SpawnAgentInput } from "../../shared/agents";
import type { BusEvent } from "../../shared/events";
import { PageInput } from "../../shared/api";
import type { Context } from "../trpc/context";
import { publicProcedure, router } from "../trpc/init";

/** An agent's id or alias: procedures resolve it with `ctx.agents.resolveId` and answer with canonical ids. */
const agentId = z.string().min(1);
const lastEventId = z.string().regex(/^\d+$/).nullish();

export const AgentsInput = {
  ref: z.object({ agentId }).strict(),
  /** `cascade`: the agents it spawned (and theirs) are stopped too. */
  stop: z.object({ agentId, cascade: z.boolean().default(false) }).strict(),
  list: z
    .object({
      /** Only agents in these statuses (or, with `needsYou`, needing a human). */
      status: z.array(AgentStatus).optional(),
      /** Only agents waiting for a human: questions asked or a tool approval pending (or, with `status`, in those statuses). */
      needsYou: z.boolean().optional(),
      taskId: z.string().optional(),
      phaseId: z.string().optional(),
      ...PageInput,
    })
    .strict()
    .default({}),
  counts: z.object({ taskId: z.string().optional(), phaseId: z.string().optional() }).strict().default({}),
  delete: z.object({ agentId, force: z.boolean().default(false) }).strict(),
  resume: z.object({ agentId, answers: z.record(z.string(), z.string()) }).strict(),
  message: z.object({ agentId, text: z.string().min(1) }).strict(),
  output: z
    .object({
      agentId,
      /** First line (0-based); omitted: the last `limit` lines. */
      fromLine: z.number().int().nonnegative().optional(),
      limit: z.number().int().min(1).max(5000).default(200),
      format: z.enum(["events", "raw", "both"]).default("events"),
      maxFieldBytes: z.number().int().min(256).max(64 * 1024 * 1024).optional(),
    })
    .strict(),
  diff: z.object({ agentId, maxBytes: z.number().int().min(1024).max(16 * 1024 * 1024).optional() }).strict(),
  approvals: z.object({ agentId: agentId.optional(), status: ApprovalStatus.optional() }).strict().default({}),
  decide: z.object({ approvalId: z.string().min(1), allow: z.boolean(), message: z.string().optional(), updatedInput: z.unknown().optional() }).strict(),
  onUpdate: z.object({ lastEventId }).strict().default({}),
  onOutput: z.object({ agentId, lastEventId, format: z.enum(["events", "raw", "both"]).default("events") }).strict(),
};

/** What an agent's token may list: its family (a human's: everyone). */
async function familyFilter(ctx: Context): Promise<{ ids?: string[] }> {
  if (ctx.principal?.kind !== "agent") return {};
  return { ids: [...(await ctx.agents.familyOf(ctx.principal.agentId))] };
}

const isAgentEvent = (e: BusEvent) => e.type.startsWith("agent.") || e.type.startsWith("worktree.");

/** CLI coding agents over tRPC. */
export const agentsRouter = router({
  providers: publicProcedure.query(({ ctx }) => ctx.agents.providers()),
  // spawned with an agent's token: that agent's child
  spawn: publicProcedure.input(SpawnAgentInput).mutation(({ input, ctx }) => ctx.agents.spawn(input, ctx.principal?.kind === "agent" ? { parentAgentId: ctx.principal.agentId } : {})),
  /** A page of agents, newest first: `{ items, nextCursor }` (keyset paging, see PageInput); an agent's token sees its family only. */
  list: publicProcedure.input(AgentsInput.list).query(async ({ input, ctx }) => {
    const { limit, cursor, direction: _direction, ...filter } = input;
    return ctx.agents.list({ ...filter, ...(await familyFilter(ctx)) }, { limit, cursor });
  }),
  /** How many agents in all, per status and needing a human, without reading them (an agent's token: its family's). */
  counts: publicProcedure.input(AgentsInput.counts).query(async ({ input, ctx }) => ctx.agents.counts({ ...input, ...(await familyFilter(ctx)) })),
  get: publicProcedure.input(AgentsInput.ref).query(({ input, ctx }) => ctx.agents.get(input.agentId)),
  stop: publicProcedure.input(AgentsInput.stop).mutation(({ input, ctx }) => ctx.agents.stop(input.agentId, { cascade: input.cascade })),
  delete: publicProcedure.input(AgentsInput.delete).mutation(async ({ input, ctx }) => {
    const id = await ctx.agents.resolveId(input.agentId);
    await ctx.agents.delete(id, { force: input.force });
    return { deleted: id };
  }),
  resume: publicProcedure.input(AgentsInput.resume).mutation(({ input, ctx }) => ctx.agents.resume(input.agentId, input.answers)),
  message: publicProcedure.input(AgentsInput.message).mutation(({ input, ctx }) => ctx.agents.message(input.agentId, input.text)),
  /**
   * A page of an agent's log, with `lastEventId`: the bus's last id, read before the lines, so
   * `agents.onOutput` resumed from it misses none written after this page (one request, not two).
   */
  output: publicProcedure.input(AgentsInput.output).query(async ({ input, ctx }) => {
    const { agentId: id, ...q } = input;
    const lastEventId = ctx.bus.lastId;
    return { ...(await ctx.agents.output(id, q)), lastEventId };
  }),
  changes: publicProcedure.input(AgentsInput.ref).query(({ input, ctx }) => ctx.agents.changes(input.agentId)),
  merge: publicProcedure
    .input(z.object({ agentId, into: z.string().min(1).optional(), target: z.string().min(1).optional(), strategy: MergeStrategy.default("merge") }).strict())
    .mutation(({ input, ctx }) => {
      const into = input.into ?? input.target;
      return ctx.agents.merge(input.agentId, { strategy: input.strategy, ...(into ? { into } : {}) });
    }),
  /** Remove a finished agent's worktree (branch kept with commits); `discard` throws uncommitted work away. */
  cleanup: publicProcedure
    .input(z.object({ agentId, discard: z.boolean().default(false) }).strict())
    .mutation(({ input, ctx }) => ctx.agents.cleanup(input.agentId, { discard: input.discard })),
  /** Disk used per worktree now; merged and clean worktrees of finished agents removed; stale metadata pruned. */
  sweep: publicProcedure.mutation(({ ctx }) => ctx.agents.sweep()),
  diff: publicProcedure.input(AgentsInput.diff).query(({ input, ctx }) => ctx.agents.diff(input.agentId, input.maxBytes)),
  approvals: publicProcedure
    .input(AgentsInput.approvals)
    .query(async ({ input, ctx }) => ctx.agents.approvals.list({ ...input, ...(input.agentId ? { agentId: await ctx.agents.resolveId(input.agentId, { lenient: true }) } : {}) })),
  decide: publicProcedure.input(AgentsInput.decide).mutation(({ input, ctx }) => {
    const { approvalId, ...decision } = input;
    return ctx.agents.approvals.decide(approvalId, decision);
  }),
  /**
   * Lifecycle changes of every agent (not output), replayed after lastEventId: each yields the
   * event and the agent as it is now (null once deleted).
   */
  onUpdate: publicProcedure.input(AgentsInput.onUpdate).subscription(async function* ({ input, ctx, signal }) {
    const afterId = input.lastEventId ? Number(input.lastEventId) : 0;
    ctx.stats.sseOpened();
    try {
      for await (const batch of ctx.bus.subscribeBatches({ afterId, signal })) {
        const events = batch.filter((e) => isAgentEvent(e) && e.type !== "agent.output_produced");
        if (events.length === 0) continue;
        const ids = [...new Set(events.map((e) => e.scope.agentId).filter((id): id is string => !!id))];
        const agents = await Promise.all(ids.map((id) => ctx.agents.get(id).catch(() => ({ id, deleted: true as const }))));
        yield tracked(String(batch[batch.length - 1]!.id), { events, agents });
      }
    } finally {
      ctx.stats.sseClosed();
    }
  }),
  /** An agent's output lines (parsed and/or raw) as they are persisted, replayed after lastEventId. */
  onOutput: publicProcedure.input(AgentsInput.onOutput).subscription(async function* ({ input, ctx, signal }) {
    const afterId = input.lastEventId ? Number(input.lastEventId) : 0;
    const id = await ctx.agents.resolveId(input.agentId, { lenient: true });
    ctx.stats.sseOpened();
    try {
      for await (const batch of ctx.bus.subscribeBatches({ afterId, scope: { kind: "agent", id }, signal })) {
        const chunks = await Promise.all(batch.map((e) => (e.type === "agent.output_produced" ? ctx.agents.chunkOutput(id, e.payload.chunkId, input.format) : [])));
        const lines = chunks.flat();
        const lifecycle = batch.filter((e) => e.type !== "agent.output_produced");
        yield tracked(String(batch[batch.length - 1]!.id), { lines, events: lifecycle });
      }
    } finally {
      ctx.stats.sseClosed();
    }
  }),
});
