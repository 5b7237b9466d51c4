import { z } from "zod";
import { EventScope, EventTypeFilter, ScopeFilter } from "./events";

/** Wire shapes of the HTTP endpoints that are not tRPC. */
export const Health = z.object({
  status: z.literal("ok"),
  /** seconds since the server started */
  uptime: z.number(),
  activeRuns: z.number().int(),
  connectedClients: z.number().int(),
});
export type Health = z.infer<typeof Health>;

export const OnEventInput = z
  .object({
    /** Resume after this event id (tRPC passes the last tracked id on reconnect). */
    lastEventId: z.string().regex(/^\d+$/, "expected a decimal event id").nullish(),
    scope: ScopeFilter.optional(),
    /** Only events of these types (an old name of a renamed event counts as its new name). */
    types: z.array(EventTypeFilter).min(1).max(100).optional(),
  })
  .strict();
export type OnEventInput = z.infer<typeof OnEventInput>;

export const ListEventsInput = z
  .object({
    afterId: z.number().int().nonnegative().default(0),
    limit: z.number().int().min(1).max(5000).default(500),
    scope: ScopeFilter.optional(),
  })
  .strict();
export type ListEventsInput = z.infer<typeof ListEventsInput>;

export const EmitInput = z
  .object({
    message: z.string().min(1).max(10_000),
    scope: EventScope.optional(),
  })
  .strict();
export type EmitInput = z.infer<typeof EmitInput>;

/**
 * Keyset paging of a list (runs.list, agents.list): `limit` rows at most (omitted: every row),
 * newest first, after `cursor` (the `nextCursor` of the page before; omitted or null: the first
 * page). A cursor names the last row shown (its sort key and id), not a position, so rows added
 * meanwhile shift nothing: the next page starts right after that row, without a repeat or a gap.
 * It is opaque: pass it back as it came, with the same filters.
 */
export const PageInput = {
  limit: z.number().int().min(1).max(1000).optional(),
  cursor: z.string().min(1).max(500).nullish(),
  /** Sent by tRPC's infinite queries (useInfiniteQuery); pages only go forward, so it changes nothing. */
  direction: z.enum(["forward", "backward"]).optional(),
};

/** One page of a list; `nextCursor` is null on the last one. */
export const ListPage = <T extends z.ZodType>(item: T) => z.object({ items: z.array(item), nextCursor: z.string().nullable() });
export type ListPage<T> = { items: T[]; nextCursor: string | null };
