import { z } from "zod";
import { DaemonLoopStatus, DaemonStatus } from "./statuses";

/** Wire shapes of daemon agents: long-lived agents with a durable FIFO trigger queue. */

export const DaemonWakeReason = z.enum(["spawn", "message", "resume", "watch", "timer"]);
export type DaemonWakeReason = z.infer<typeof DaemonWakeReason>;

export const SpawnDaemonInput = z
  .object({
    task: z.string().min(1).optional(),
    prompt: z.string().min(1).optional(),
    name: z.string().min(1).max(200).optional(),
    system: z.string().optional(),
    model: z.string().min(1).default("mock/echo"),
    tools: z.array(z.string().min(1)).optional(),
    maxIterations: z.number().int().positive().optional(),
    wakeIntervalMs: z.number().int().min(10).optional(),
    watchPaths: z.array(z.string().min(1)).optional(),
    idleWatchdogAttempts: z.number().int().positive().optional(),
    eventQueueCapacity: z.number().int().positive().max(1_000_000).default(1024),
    /** The daemon's root directory (default `<home>/daemons/<id>`). */
    persistPath: z.string().min(1).optional(),
    sessionId: z.string().min(1).optional(),
    /** Accept trigger events (default true); without them, watch paths or a timer, the loop ends `idle`. */
    triggers: z.boolean().default(true),
  })
  .strict()
  .refine((v) => v.task !== undefined || v.prompt !== undefined, { message: "spawn needs a task or a prompt", path: ["task"] });
export type SpawnDaemonInput = z.input<typeof SpawnDaemonInput>;

export const QueuedDaemonEvent = z.object({ seq: z.number().int().nonnegative(), enqueued_at: z.string(), payload: z.unknown() });
export type QueuedDaemonEvent = z.infer<typeof QueuedDaemonEvent>;

/** A daemon handle, as the reference returns it (snake_case fields). */
export const DaemonSummary = z.object({
  id: z.string(),
  name: z.string(),
  status: DaemonStatus,
  loop_status: DaemonLoopStatus.optional(),
  daemon_state: z.enum(["active", "idle"]).optional(),
  session_id: z.string(),
  model: z.string(),
  persist_path: z.string(),
  snapshot_path: z.string(),
  pending_event_count: z.number().int(),
  queued_event_count: z.number().int(),
  event_queue_capacity: z.number().int(),
  total_iterations: z.number().int(),
  inflight_event: QueuedDaemonEvent.nullable().optional(),
  error: z.string().optional(),
  result: z.string().optional(),
  saved_at: z.string().optional(),
});
export type DaemonSummary = z.infer<typeof DaemonSummary>;

/** A daemon's conversation and loop state on disk (`daemon.json`), in the reference's layout. */
export const DaemonSnapshot = z.object({
  _type: z.literal("daemon_snapshot"),
  saved_at: z.string(),
  daemon_state: z.enum(["active", "idle"]),
  visible_messages: z.array(z.unknown()),
  recorded_messages: z.array(z.unknown()),
  transcript_summary: z.string().nullable(),
  total_iterations: z.number().int().nonnegative(),
  idle_backoff_ms: z.number().int().nonnegative(),
  watch_state: z.record(z.string(), z.number()),
  loop_status: z.string().nullable().optional(),
  last_wake_reason: z.string().nullable().optional(),
});
export type DaemonSnapshot = z.infer<typeof DaemonSnapshot>;

/** What `daemons.snapshot` returns: the persisted snapshot plus the daemon's summary and live queue. */
export type DaemonSnapshotView = Omit<DaemonSnapshot, "loop_status"> & DaemonSummary & { pending_events: QueuedDaemonEvent[] };

export const DaemonRef = z.object({ id: z.string().min(1) }).strict();
export const TriggerDaemonInput = z.object({ id: z.string().min(1), payload: z.unknown() }).strict();
export const ResumeDaemonInput = z
  .object({ id: z.string().min(1).optional(), path: z.string().min(1).optional() })
  .strict()
  .refine((v) => v.id !== undefined || v.path !== undefined, { message: "resume needs an id or a path", path: ["id"] });
export const OnDaemonEventsInput = z
  .object({ daemonId: z.string().min(1), lastEventId: z.string().regex(/^\d+$/, "expected a decimal event id").nullish() })
  .strict();
