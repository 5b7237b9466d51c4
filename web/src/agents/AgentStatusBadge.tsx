import { agentStatusLabel } from "../../../shared/status-labels";
import type { AgentStatus } from "../../../shared/statuses";

/** The colors of each status; its words are shared/status-labels.ts's (the CLI shows the same). */
const STYLES: Record<AgentStatus, { badge: string; dot: string }> = {
  queued: { badge: "bg-zinc-100 text-zinc-700 ring-zinc-500/20 dark:bg-zinc-400/10 dark:text-zinc-300 dark:ring-zinc-400/20", dot: "bg-zinc-400" },
  starting: { badge: "bg-zinc-100 text-zinc-700 ring-zinc-500/20 dark:bg-zinc-400/10 dark:text-zinc-300 dark:ring-zinc-400/20", dot: "bg-zinc-400 animate-pulse" },
  running: { badge: "bg-indigo-50 text-indigo-700 ring-indigo-600/20 dark:bg-indigo-400/10 dark:text-indigo-300 dark:ring-indigo-400/25", dot: "bg-indigo-500 animate-pulse" },
  waiting_for_input: { badge: "bg-amber-50 text-amber-800 ring-amber-600/25 dark:bg-amber-400/10 dark:text-amber-300 dark:ring-amber-400/25", dot: "bg-amber-500 animate-pulse" },
  waiting_for_account: { badge: "bg-amber-50 text-amber-800 ring-amber-600/25 dark:bg-amber-400/10 dark:text-amber-300 dark:ring-amber-400/25", dot: "bg-amber-500" },
  idle: { badge: "bg-emerald-50 text-emerald-700 ring-emerald-600/20 dark:bg-emerald-400/10 dark:text-emerald-300 dark:ring-emerald-400/20", dot: "bg-emerald-500" },
  stopped: { badge: "bg-zinc-100 text-zinc-600 ring-zinc-500/20 dark:bg-zinc-400/10 dark:text-zinc-400 dark:ring-zinc-400/20", dot: "bg-zinc-400" },
  interrupted: { badge: "bg-orange-50 text-orange-800 ring-orange-600/25 dark:bg-orange-400/10 dark:text-orange-300 dark:ring-orange-400/25", dot: "bg-orange-500" },
  crashed: { badge: "bg-red-50 text-red-700 ring-red-600/20 dark:bg-red-400/10 dark:text-red-300 dark:ring-red-400/20", dot: "bg-red-500" },
};

/**
 * An agent's status as a pill; `data-status` carries the raw value for tests and scripts. An agent
 * that needs a human (`AgentInfo.needsYou`: answers, or a tool approval while it runs) shows
 * "Needs you" whatever its stored status; `data-needs-you` says so.
 */
export function AgentStatusBadge({ status, needsYou = false }: { status: AgentStatus; needsYou?: boolean }) {
  const s = needsYou ? STYLES.waiting_for_input : STYLES[status];
  return (
    <span data-testid="agent-status" data-status={status} data-needs-you={needsYou || undefined} className={`inline-flex items-center gap-1.5 rounded-full px-2 py-0.5 text-xs font-medium whitespace-nowrap ring-1 ring-inset ${s.badge}`}>
      <span className={`size-1.5 rounded-full ${s.dot}`} aria-hidden="true" />
      {agentStatusLabel({ status, needsYou })}
    </span>
  );
}
