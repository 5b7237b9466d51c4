import { tracked } from "@trpc/server";
import { DaemonRef, OnDaemonEventsInput, ResumeDaemonInput, SpawnDaemonInput, TriggerDaemonInput } from "../../shared/daemons";
import { DomainError } from "../errors";
import type { Context } from "../trpc/context";
import { publicProcedure, router } from "../trpc/init";
import type { DaemonsService } from "./daemons.service";

/** The daemons service of a context (wired by createServer as `ctx.daemons`). */
function service(ctx: Context): DaemonsService {
  const daemons = ctx.daemons as DaemonsService | undefined;
  if (!daemons) throw new DomainError("DAEMONS_UNAVAILABLE", "Daemon agents are not enabled on this server", { kind: "NOT_IMPLEMENTED" });
  return daemons;
}

/** Every procedure taking a daemon takes its id or its name (`DaemonsService.resolveId`). */
export const daemonsRouter = router({
  spawn: publicProcedure.input(SpawnDaemonInput).mutation(({ input, ctx }) => service(ctx).spawn(input)),
  /** Resolves once the event is durably queued. */
  trigger: publicProcedure.input(TriggerDaemonInput).mutation(({ input, ctx }) => service(ctx).trigger(input.id, input.payload)),
  snapshot: publicProcedure.input(DaemonRef).query(({ input, ctx }) => service(ctx).snapshot(input.id)),
  stop: publicProcedure.input(DaemonRef).mutation(({ input, ctx }) => service(ctx).stop(input.id)),
  resume: publicProcedure.input(ResumeDaemonInput).mutation(({ input, ctx }) => service(ctx).resume(input)),
  list: publicProcedure.query(({ ctx }) => service(ctx).list()),
  delete: publicProcedure.input(DaemonRef).mutation(({ input, ctx }) => service(ctx).delete(input.id)),
  /** The daemon's events after lastEventId, then live ones, in batches tracked by their last id. */
  onEvents: publicProcedure.input(OnDaemonEventsInput).subscription(async function* ({ input, ctx, signal }) {
    const afterId = input.lastEventId ? Number(input.lastEventId) : 0;
    const id = await service(ctx).resolveId(input.daemonId, { lenient: true });
    ctx.stats.sseOpened();
    try {
      for await (const batch of ctx.bus.subscribeBatches({ afterId, scope: { kind: "daemon", id }, signal })) {
        yield tracked(String(batch[batch.length - 1]!.id), batch);
      }
    } finally {
      ctx.stats.sseClosed();
    }
  }),
});
