import type { AgentStatus, RunStatus } from "../../shared/statuses";

/** The rules retention shares between events (retention.ts) and agent output (retention-output.ts). */

/** Runs whose latest segment ended: their timeline may go once old. Pending and running runs keep all. */
export const ENDED_RUN: readonly RunStatus[] = ["completed", "error", "cancelled"];
/** Agents done with their work: idle, stopped, crashed. Waiting ones (a human, an account) and interrupted ones are not. */
export const ENDED_AGENT: readonly AgentStatus[] = ["idle", "stopped", "crashed"];

/** What counts as old: written before a time (epoch ms), at or below an id, or either. */
export type Horizon = { beforeTs?: number; throughId?: number };

export function isOld(h: Horizon, row: { id: number; ts: number }): boolean {
  return (h.beforeTs !== undefined && row.ts < h.beforeTs) || (h.throughId !== undefined && row.id <= h.throughId);
}

/** Between batches: let other work (requests, the bus) run; false when the pass is asked to stop. */
export async function breathe(signal: AbortSignal | undefined): Promise<boolean> {
  await new Promise<void>((resolve) => setImmediate(resolve));
  return !signal?.aborted;
}
