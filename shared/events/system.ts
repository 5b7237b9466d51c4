import { z } from "zod";

/** Events of the server itself: the first thing a live feed shows. */
export const SystemEvents = {
  "server.started": z.object({
    version: z.string(),
    pid: z.number().int(),
    host: z.string(),
    port: z.number().int(),
    /** ids up to this one were stored by an earlier process. */
    resumedFromEventId: z.number().int().nonnegative(),
  }),
  "server.shutdown_started": z.object({
    reason: z.string(),
  }),
  /** Free-form note, used by `yard emit` and tests to put an event on the bus. */
  "system.noted": z.object({
    message: z.string().max(10_000),
    data: z.unknown().optional(),
  }),
} as const;
