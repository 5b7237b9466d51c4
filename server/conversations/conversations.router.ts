import { tracked } from "@trpc/server";
import { z } from "zod";
import { AskInput } from "../../shared/conversations";
import { publicProcedure, router } from "../trpc/init";

const id = z.object({ conversationId: z.string().min(1) }).strict();

/** Conversations between agents, and from agents to a human (`toAgentId: "human"`). */
export const conversationsRouter = router({
  ask: publicProcedure.input(AskInput).mutation(({ input, ctx }) => ctx.conversations.ask(input)),
  get: publicProcedure.input(id).query(({ input, ctx }) => ctx.conversations.get(input.conversationId)),
  pending: publicProcedure.input(z.object({ agentId: z.string().min(1) }).strict()).query(({ input, ctx }) => ctx.conversations.pending(input.agentId)),
  list: publicProcedure
    .input(z.object({ agentId: z.string().optional(), status: z.enum(["pending", "answered"]).optional() }).strict().default({}))
    .query(({ input, ctx }) => ctx.conversations.list(input)),
  answer: publicProcedure.input(z.object({ conversationId: z.string().min(1), answer: z.string().min(1) }).strict()).mutation(({ input, ctx }) => ctx.conversations.answer(input.conversationId, input.answer)),
  /**
   * Pending questions for an agent: those already waiting, then each new one as it is asked
   * (subscribed before the backlog is read: none is missed), tracked by event id.
   */
  onPending: publicProcedure.input(z.object({ agentId: z.string().min(1), lastEventId: z.string().regex(/^\d+$/).nullish() }).strict()).subscription(async function* ({ input, ctx, signal }) {
    const agentId = await ctx.conversations.agentRef(input.agentId);
    ctx.stats.sseOpened();
    try {
      const from = input.lastEventId ? Number(input.lastEventId) : ctx.bus.lastId;
      const seen = new Set<string>();
      const events = ctx.bus.subscribeBatches({ afterId: from, scope: { kind: "agent", id: agentId }, signal });
      if (!input.lastEventId) {
        for (const c of await ctx.conversations.pending(agentId)) {
          seen.add(c.id);
          yield tracked(String(from), c);
        }
      }
      for await (const batch of events) {
        for (const e of batch) {
          if (e.type !== "conversation.created" || !e.scope.conversationId || seen.has(e.scope.conversationId)) continue;
          seen.add(e.scope.conversationId);
          const c = await ctx.conversations.get(e.scope.conversationId);
          if (c.status === "pending" && c.toAgentId === agentId) yield tracked(String(e.id), c);
        }
      }
    } finally {
      ctx.stats.sseClosed();
    }
  }),
});
