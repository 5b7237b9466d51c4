import type { DaemonStatus } from "../../../shared/statuses";

const STYLES: Record<DaemonStatus, { label: string; badge: string; dot: string }> = {
  running: { label: "Running", badge: "bg-indigo-50 text-indigo-700 ring-indigo-600/20 dark:bg-indigo-400/10 dark:text-indigo-300 dark:ring-indigo-400/25", dot: "bg-indigo-500 animate-pulse" },
  stopped: { label: "Stopped", badge: "bg-zinc-100 text-zinc-600 ring-zinc-500/20 dark:bg-zinc-400/10 dark:text-zinc-400 dark:ring-zinc-400/20", dot: "bg-zinc-400" },
  failed: { label: "Failed", badge: "bg-red-50 text-red-700 ring-red-600/20 dark:bg-red-400/10 dark:text-red-300 dark:ring-red-400/20", dot: "bg-red-500" },
};

/** A daemon's status as a pill; `data-status` carries the raw value for tests and scripts. */
export function DaemonStatusBadge({ status }: { status: DaemonStatus }) {
  const s = STYLES[status];
  return (
    <span data-testid="daemon-status" data-status={status} className={`inline-flex items-center gap-1.5 rounded-full px-2 py-0.5 text-xs font-medium whitespace-nowrap ring-1 ring-inset ${s.badge}`}>
      <span className={`size-1.5 rounded-full ${s.dot}`} aria-hidden="true" />
      {s.label}
    </span>
  );
}

const LOOP_LABELS: Record<string, string> = {
  done: "done",
  stuck: "stuck",
  budget_exhausted: "out of iterations",
  idle: "nothing could wake it",
  watchdog: "idle watchdog",
  failed: "failed",
};

/**
 * What the loop is doing: working or waiting for a wake while running, how it ended once it did.
 * Capitalised like every status in the dashboard ("Working", "Ended: done").
 */
export function loopLabel(d: { status: DaemonStatus; loop_status?: string | undefined; daemon_state?: string | undefined }): string {
  if (d.status === "running") return d.daemon_state === "active" ? "Working" : "Waiting";
  if (d.loop_status) return `Ended: ${LOOP_LABELS[d.loop_status] ?? d.loop_status}`;
  return d.status === "stopped" ? "Stopped" : "—";
}
