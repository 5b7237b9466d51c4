import type { AgentMerge } from "../../../shared/agents";
import { formatRelative } from "../lib/format";

/** Where an agent's branch was last merged: target, strategy, the commit it made there, when. */
export function MergedBadge({ merge, now, compact = false }: { merge: AgentMerge; now: number; compact?: boolean }) {
  const title = `Merged into ${merge.into} by ${merge.strategy} as ${merge.commit} (${new Date(merge.at).toLocaleString()}); branch head ${merge.head.slice(0, 8)}`;
  return (
    <span
      data-testid="agent-merged"
      data-into={merge.into}
      title={title}
      className="inline-flex items-center gap-1.5 rounded-full bg-violet-50 px-2 py-0.5 text-xs font-medium whitespace-nowrap text-violet-700 ring-1 ring-violet-600/20 ring-inset dark:bg-violet-400/10 dark:text-violet-300 dark:ring-violet-400/20"
    >
      <svg viewBox="0 0 16 16" className="size-3" fill="none" stroke="currentColor" strokeWidth="1.6" aria-hidden="true">
        <circle cx="4" cy="3.5" r="1.5" />
        <circle cx="4" cy="12.5" r="1.5" />
        <circle cx="12" cy="6.5" r="1.5" />
        <path d="M4 5v6M12 8c0 2.5-3 3-8 3" />
      </svg>
      {compact ? (
        <span>Merged into {merge.into}</span>
      ) : (
        <span>
          Merged into {merge.into} · {merge.strategy} · <span className="font-mono">{merge.commit.slice(0, 8)}</span> · {formatRelative(merge.at, now)}
        </span>
      )}
    </span>
  );
}
