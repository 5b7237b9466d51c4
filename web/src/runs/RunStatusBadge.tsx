import type { RunStatus } from "../../../shared/statuses";

export type BadgeStatus = RunStatus | "waiting";

const STYLES: Record<BadgeStatus, { label: string; badge: string; dot: string }> = {
  pending: { label: "Pending", badge: "bg-zinc-100 text-zinc-700 ring-zinc-500/20 dark:bg-zinc-400/10 dark:text-zinc-300 dark:ring-zinc-400/20", dot: "bg-zinc-400" },
  running: { label: "Running", badge: "bg-indigo-50 text-indigo-700 ring-indigo-600/20 dark:bg-indigo-400/10 dark:text-indigo-300 dark:ring-indigo-400/25", dot: "bg-indigo-500 animate-pulse" },
  waiting: { label: "Needs you", badge: "bg-amber-50 text-amber-800 ring-amber-600/25 dark:bg-amber-400/10 dark:text-amber-300 dark:ring-amber-400/25", dot: "bg-amber-500 animate-pulse" },
  completed: { label: "Completed", badge: "bg-emerald-50 text-emerald-700 ring-emerald-600/20 dark:bg-emerald-400/10 dark:text-emerald-300 dark:ring-emerald-400/20", dot: "bg-emerald-500" },
  error: { label: "Failed", badge: "bg-red-50 text-red-700 ring-red-600/20 dark:bg-red-400/10 dark:text-red-300 dark:ring-red-400/20", dot: "bg-red-500" },
  cancelled: { label: "Cancelled", badge: "bg-zinc-100 text-zinc-600 ring-zinc-500/20 dark:bg-zinc-400/10 dark:text-zinc-400 dark:ring-zinc-400/20", dot: "bg-zinc-400" },
};

export function statusLabel(status: BadgeStatus): string {
  return STYLES[status].label;
}

/** A run's status as a small pill; `data-status` carries the raw value for tests and scripts. */
export function RunStatusBadge({ status, className = "" }: { status: BadgeStatus; className?: string }) {
  const s = STYLES[status];
  return (
    <span data-testid="run-status" data-status={status} className={`inline-flex items-center gap-1.5 rounded-full px-2 py-0.5 text-xs font-medium ring-1 ring-inset ${s.badge} ${className}`}>
      <span className={`size-1.5 rounded-full ${s.dot}`} aria-hidden="true" />
      {s.label}
    </span>
  );
}
