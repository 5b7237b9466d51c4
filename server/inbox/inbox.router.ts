import { tracked } from "@trpc/server";
import { z } from "zod";
import { publicProcedure, router } from "../trpc/init";
import { INBOX_EVENTS, inboxItems } from "./inbox.service";

/** One place for everything waiting on a human. */
export const inboxRouter = router({
  list: publicProcedure.query(async ({ ctx }) => {
    const lastEventId = ctx.bus.lastId;
    return { items: await inboxItems(ctx.agents, ctx.runs, ctx.conversations), lastEventId };
  }),
  /**
   * The whole inbox, again after every event that may change it: a (re)connecting client gets the
   * complete current list at once, then each change; tracked by event id.
   */
  onChange: publicProcedure.input(z.object({ lastEventId: z.string().regex(/^\d+$/).nullish() }).strict().default({})).subscription(async function* ({ ctx, signal }) {
    ctx.stats.sseOpened();
    try {
      const from = ctx.bus.lastId;
      yield tracked(String(from), { items: await inboxItems(ctx.agents, ctx.runs, ctx.conversations) });
      for await (const batch of ctx.bus.subscribeBatches({ afterId: from, signal })) {
        if (!batch.some((e) => INBOX_EVENTS.has(e.type))) continue;
        yield tracked(String(batch[batch.length - 1]!.id), { items: await inboxItems(ctx.agents, ctx.runs, ctx.conversations) });
      }
    } finally {
      ctx.stats.sseClosed();
    }
  }),
});
