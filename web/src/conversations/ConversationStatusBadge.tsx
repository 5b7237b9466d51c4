import type { ConversationStatus } from "../../../shared/statuses";

const STYLES: Record<ConversationStatus, { label: string; badge: string; dot: string }> = {
  pending: { label: "Pending", badge: "bg-amber-50 text-amber-800 ring-amber-600/25 dark:bg-amber-400/10 dark:text-amber-300 dark:ring-amber-400/25", dot: "bg-amber-500" },
  answered: { label: "Answered", badge: "bg-emerald-50 text-emerald-700 ring-emerald-600/20 dark:bg-emerald-400/10 dark:text-emerald-300 dark:ring-emerald-400/20", dot: "bg-emerald-500" },
};

/** A question's status as a pill, like every other status of the dashboard. */
export function ConversationStatusBadge({ status }: { status: ConversationStatus }) {
  const s = STYLES[status];
  return (
    <span data-testid="conversation-status" data-status={status} className={`inline-flex items-center gap-1.5 rounded-full px-2 py-0.5 text-xs font-medium whitespace-nowrap ring-1 ring-inset ${s.badge}`}>
      <span className={`size-1.5 rounded-full ${s.dot}`} aria-hidden="true" />
      {s.label}
    </span>
  );
}
