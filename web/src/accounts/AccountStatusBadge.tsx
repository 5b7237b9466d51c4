import type { AccountInfo } from "../../../shared/accounts";

type AccountStatus = AccountInfo["status"];

const STYLES: Record<AccountStatus, { label: string; badge: string; dot: string }> = {
  available: { label: "Available", badge: "bg-emerald-50 text-emerald-700 ring-emerald-600/20 dark:bg-emerald-400/10 dark:text-emerald-300 dark:ring-emerald-400/20", dot: "bg-emerald-500" },
  exhausted: { label: "Exhausted", badge: "bg-amber-50 text-amber-800 ring-amber-600/25 dark:bg-amber-400/10 dark:text-amber-300 dark:ring-amber-400/25", dot: "bg-amber-500" },
  invalid: { label: "Invalid", badge: "bg-red-50 text-red-700 ring-red-600/20 dark:bg-red-400/10 dark:text-red-300 dark:ring-red-400/20", dot: "bg-red-500" },
};

/** "Exhausted", as the spawn form's account picker says it. */
export function accountStatusLabel(status: AccountStatus): string {
  return STYLES[status].label;
}

/** An account's status as a pill, like the runs', agents' and daemons'; `data-status` carries the raw value. */
export function AccountStatusBadge({ status }: { status: AccountStatus }) {
  const s = STYLES[status];
  return (
    <span data-testid="account-status" data-status={status} className={`inline-flex items-center gap-1.5 rounded-full px-2 py-0.5 text-xs font-medium whitespace-nowrap ring-1 ring-inset ${s.badge}`}>
      <span className={`size-1.5 rounded-full ${s.dot}`} aria-hidden="true" />
      {s.label}
    </span>
  );
}
