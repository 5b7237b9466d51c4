const STYLE: Record<string, string> = {
  running: "bg-indigo-50 text-indigo-700 ring-indigo-600/20 dark:bg-indigo-400/10 dark:text-indigo-300",
  stopped: "bg-zinc-100 text-zinc-600 ring-zinc-500/20 dark:bg-zinc-400/10 dark:text-zinc-400",
  failed: "bg-red-50 text-red-700 ring-red-600/20 dark:bg-red-400/10 dark:text-red-300",
};

/** A daemon's status (and, when it ended, its loop status; while running, active or idle). */
export function DaemonStatusBadge({ status, loop, state }: { status: string; loop?: string | undefined; state?: string | undefined }) {
  const detail = status === "running" ? state : loop;
  return (
    <span data-testid="daemon-status" data-status={status} className={`inline-flex items-center gap-1 rounded-full px-2 py-0.5 text-xs font-medium ring-1 ring-inset ${STYLE[status] ?? STYLE.stopped}`}>
      {status}
      {detail && <span className="opacity-70">· {detail}</span>}
    </span>
  );
}
