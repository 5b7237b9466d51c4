import { WORKER_STATE_LABELS } from "../../../shared/status-labels";
import type { WorkerState } from "../../../shared/workers";

/** The colors of each state, as the agents' and daemons' badges have them; the words are shared/status-labels.ts's. */
const STYLES: Record<WorkerState, { badge: string; dot: string }> = {
  connected: { badge: "bg-emerald-50 text-emerald-700 ring-emerald-600/20 dark:bg-emerald-400/10 dark:text-emerald-300 dark:ring-emerald-400/20", dot: "bg-emerald-500" },
  disconnected: { badge: "bg-amber-50 text-amber-800 ring-amber-600/25 dark:bg-amber-400/10 dark:text-amber-300 dark:ring-amber-400/25", dot: "bg-amber-500 animate-pulse" },
  lost: { badge: "bg-red-50 text-red-700 ring-red-600/20 dark:bg-red-400/10 dark:text-red-300 dark:ring-red-400/20", dot: "bg-red-500" },
  revoked: { badge: "bg-zinc-100 text-zinc-600 ring-zinc-500/20 dark:bg-zinc-400/10 dark:text-zinc-400 dark:ring-zinc-400/20", dot: "bg-zinc-400" },
  new: { badge: "bg-sky-50 text-sky-700 ring-sky-600/20 dark:bg-sky-400/10 dark:text-sky-300 dark:ring-sky-400/20", dot: "bg-sky-400" },
};

/** A worker's state as a pill; `data-state` carries the raw value for tests and scripts. */
export function WorkerStateBadge({ state }: { state: WorkerState }) {
  const s = STYLES[state];
  return (
    <span data-testid="worker-state" data-state={state} className={`inline-flex items-center gap-1.5 rounded-full px-2 py-0.5 text-xs font-medium whitespace-nowrap ring-1 ring-inset ${s.badge}`}>
      <span className={`size-1.5 rounded-full ${s.dot}`} aria-hidden="true" />
      {WORKER_STATE_LABELS[state]}
    </span>
  );
}

/** Drained: no new agents go to it (its running ones finish). */
export function DrainedBadge() {
  return (
    <span data-testid="worker-drained" title="No new agents go to it; the running ones finish" className="inline-flex items-center rounded-full px-2 py-0.5 text-xs font-medium whitespace-nowrap text-violet-700 ring-1 ring-violet-600/20 ring-inset bg-violet-50 dark:bg-violet-400/10 dark:text-violet-300 dark:ring-violet-400/25">
      Drained
    </span>
  );
}
