import { tracked } from "@trpc/server";
import { EmitInput, ListEventsInput, OnEventInput } from "../../shared/api";
import type { EventType, ScopeFilter } from "../../shared/events";
import type { Context } from "../trpc/context";
import { publicProcedure, router } from "../trpc/init";

/** An agent scope by alias, a daemon scope by name: the canonical id (unknown ids as given: events outlive them). */
async function canonical(ctx: Context, scope: ScopeFilter | undefined): Promise<ScopeFilter | undefined> {
  if (scope?.kind === "agent") return { kind: "agent", id: await ctx.agents.resolveId(scope.id, { lenient: true }) };
  if (scope?.kind === "daemon" && ctx.daemons) return { kind: "daemon", id: await ctx.daemons.resolveId(scope.id, { lenient: true }) };
  return scope;
}

/** The types a subscriber asked for (old names already mapped to new ones by the input schema). */
function typeFilter(types: readonly EventType[] | undefined): ReadonlySet<string> | undefined {
  return types ? new Set(types) : undefined;
}

export const eventsRouter = router({
  /**
   * Every event after lastEventId (the backlog from the store), then live ones: no gap, no
   * duplicate, also across a reconnect or a server restart. Each is `tracked(id)` so the client
   * resumes by itself. One event a message: what the dashboard's event feed and `yard events`
   * subscribe to.
   */
  onEvent: publicProcedure.input(OnEventInput).subscription(async function* ({ input, ctx, signal }) {
    const afterId = input.lastEventId ? Number(input.lastEventId) : 0;
    ctx.stats.sseOpened();
    try {
      const types = typeFilter(input.types);
      for await (const event of ctx.bus.subscribe({ afterId, scope: await canonical(ctx, input.scope), signal })) {
        if (types && !types.has(event.type)) continue;
        yield tracked(String(event.id), event);
      }
    } finally {
      ctx.stats.sseClosed();
    }
  }),

  /**
   * As onEvent, in batches (a store page while catching up, a commit when live), each tracked by
   * its last id: the view for high-volume consumers (scripts, the benchmarks); the dashboard and
   * `yard events` use onEvent.
   */
  onEventBatch: publicProcedure.input(OnEventInput).subscription(async function* ({ input, ctx, signal }) {
    const afterId = input.lastEventId ? Number(input.lastEventId) : 0;
    ctx.stats.sseOpened();
    try {
      const types = typeFilter(input.types);
      for await (const all of ctx.bus.subscribeBatches({ afterId, scope: await canonical(ctx, input.scope), signal, highWaterMark: 100_000 })) {
        const batch = types ? all.filter((e) => types.has(e.type)) : all;
        if (batch.length > 0) yield tracked(String(batch[batch.length - 1]!.id), batch);
      }
    } finally {
      ctx.stats.sseClosed();
    }
  }),

  /** A page of stored events, oldest first. */
  list: publicProcedure.input(ListEventsInput).query(async ({ input, ctx }) => {
    const events = await ctx.bus.store.readAfter(input.afterId, await canonical(ctx, input.scope), input.limit);
    return { events, lastId: ctx.bus.lastId };
  }),

  count: publicProcedure.input(ListEventsInput.pick({ afterId: true, scope: true })).query(async ({ input, ctx }) => {
    return { count: await ctx.bus.store.count(input.afterId, await canonical(ctx, input.scope)), lastId: ctx.bus.lastId };
  }),

  /** Put a note on the bus (scripts, `yard emit`, tests). Resolves once it is stored. */
  emit: publicProcedure.input(EmitInput).mutation(async ({ input, ctx }) => {
    const event = await ctx.bus.publish("system.noted", { message: input.message }, input.scope ?? {});
    return { id: event.id };
  }),
});
