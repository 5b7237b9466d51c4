import { z } from "zod";

/** Every status enum of Switchyard, in one place (STYLE.md 4). */

export const RunStatus = z.enum(["pending", "running", "completed", "error", "cancelled"]);
export type RunStatus = z.infer<typeof RunStatus>;

export const AgentStatus = z.enum([
  "starting",
  /** Accepted, waiting for a place to run (a worker with room). */
  "queued",
  "running",
  "waiting_for_input",
  "waiting_for_account",
  "idle",
  "stopped",
  "crashed",
  /** Its host was lost while it ran (a worker gone): the work is kept; resume or message it. */
  "interrupted",
]);
export type AgentStatus = z.infer<typeof AgentStatus>;

export const DaemonStatus = z.enum(["running", "stopped", "failed"]);
export type DaemonStatus = z.infer<typeof DaemonStatus>;

export const DaemonLoopStatus = z.enum(["done", "stuck", "budget_exhausted", "idle", "watchdog", "failed"]);
export type DaemonLoopStatus = z.infer<typeof DaemonLoopStatus>;

export const ConversationStatus = z.enum(["pending", "answered"]);
export type ConversationStatus = z.infer<typeof ConversationStatus>;
