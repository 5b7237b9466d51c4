import { useMemo } from "react";
import { primaryLinkClass } from "../components/Button";
import { Cmd, EmptyState } from "../components/EmptyState";
import { DaemonsIcon, PlusIcon } from "../components/icons";
import { PageHeader } from "../components/PageHeader";
import { QueryError } from "../components/QueryError";
import { useNow } from "../hooks/useNow";
import { errorMessage } from "../lib/errors";
import { formatRelative } from "../lib/format";
import { useLiveEvents } from "../live/useLiveEvents";
import { navigate } from "../router/history";
import { Link } from "../router/Link";
import { trpc, type RouterOutputs } from "../trpc";
import { DaemonStatusBadge, loopLabel } from "./DaemonStatusBadge";
import { useDaemonsLiveRefresh } from "./useDaemonsLiveRefresh";

type DaemonSummary = RouterOutputs["daemons"]["list"][number];

const SpawnLink = ({ label }: { label: string }) => (
  <Link href="/daemons/new" className={primaryLinkClass}>
    <PlusIcon width={15} height={15} />
    {label}
  </Link>
);

/** `/daemons`: every daemon, refreshed when a daemon event arrives on the live stream. */
export function DaemonsListPage() {
  const utils = trpc.useUtils();
  const daemons = trpc.daemons.list.useQuery();
  useDaemonsLiveRefresh(() => void utils.daemons.list.invalidate());
  const list = daemons.data ?? [];
  return (
    <>
      <PageHeader
        title="Daemons"
        description="Long-lived agents that wake on a message, a file change or a timer, with a durable FIFO queue."
        actions={list.length > 0 ? <SpawnLink label="New daemon" /> : undefined}
      />
      {daemons.isPending ? (
        <p aria-busy="true" className="mt-6 text-sm text-zinc-500 dark:text-zinc-400">
          Loading daemons…
        </p>
      ) : daemons.isError && !daemons.data ? (
        <QueryError title="Cannot load the daemons" error={daemons.error} onRetry={() => void daemons.refetch()} />
      ) : list.length === 0 ? (
        <EmptyState Icon={DaemonsIcon} title="No daemons yet" action={<SpawnLink label="Spawn a daemon" />}>
          Spawn one here or with <Cmd>yard daemon spawn --task "..."</Cmd>. The <b>mock/echo</b> model needs no API key.
        </EmptyState>
      ) : (
        <>
          <DaemonsTable daemons={list} />
          {daemons.isError && <p className="mt-2 text-xs text-red-600 dark:text-red-400">Refreshing failed: {errorMessage(daemons.error)}. Showing the last known list.</p>}
        </>
      )}
    </>
  );
}

/** The newest time each daemon was heard of: its last snapshot, or its last event on the live stream. */
function useLastActivity(daemons: readonly DaemonSummary[]): Map<string, string> {
  const { events } = useLiveEvents();
  return useMemo(() => {
    const last = new Map<string, string>();
    for (const d of daemons) if (d.saved_at) last.set(d.id, d.saved_at);
    for (const e of events) {
      const id = e.scope.daemonId;
      if (!id || !e.type.startsWith("daemon.")) continue;
      const known = last.get(id);
      if (!known || Date.parse(e.ts) > Date.parse(known)) last.set(id, e.ts);
    }
    return last;
  }, [daemons, events]);
}

function DaemonsTable({ daemons }: { daemons: readonly DaemonSummary[] }) {
  const now = useNow(true, 5000);
  const lastActivity = useLastActivity(daemons);
  const th = "px-4 py-2.5 font-medium";
  return (
    <div className="mt-6 overflow-x-auto rounded-xl border border-zinc-200 bg-white shadow-sm dark:border-zinc-800 dark:bg-zinc-900/60">
      <table data-testid="daemons-table" className="w-full min-w-[60rem] text-left text-sm">
        <thead className="border-b border-zinc-200 text-xs font-medium text-zinc-500 dark:border-zinc-800 dark:text-zinc-400">
          <tr>
            <th scope="col" className={th}>Daemon</th>
            <th scope="col" className={th}>Status</th>
            <th scope="col" className={th}>Loop</th>
            <th scope="col" className={th}>Model</th>
            <th scope="col" className={`${th} text-right`} title="Pending plus in flight, of the queue's capacity">Queue</th>
            <th scope="col" className={`${th} text-right`}>Turns</th>
            <th scope="col" className={th}>Last activity</th>
            <th scope="col" className={th}>Root directory</th>
          </tr>
        </thead>
        <tbody>
          {daemons.map((d) => (
            <DaemonRow key={d.id} daemon={d} last={lastActivity.get(d.id)} now={now} />
          ))}
        </tbody>
      </table>
    </div>
  );
}

function DaemonRow({ daemon: d, last, now }: { daemon: DaemonSummary; last: string | undefined; now: number }) {
  const href = `/daemons/${encodeURIComponent(d.id)}`;
  const muted = "text-zinc-600 dark:text-zinc-400";
  return (
    <tr
      data-testid="daemon-row"
      data-daemon-id={d.id}
      onClick={(e) => {
        if ((e.target as HTMLElement).closest("a")) return;
        navigate(href);
      }}
      className="cursor-pointer border-b border-zinc-100 last:border-b-0 hover:bg-zinc-50 dark:border-zinc-800/70 dark:hover:bg-zinc-800/40"
    >
      <td className="max-w-56 px-4 py-2.5">
        <Link href={href} className="block truncate font-medium text-zinc-900 hover:underline dark:text-zinc-100">
          {d.name}
        </Link>
        <span className="block truncate font-mono text-xs text-zinc-500 dark:text-zinc-400" title={d.id}>
          {d.id}
        </span>
      </td>
      <td className="px-4 py-2.5">
        <DaemonStatusBadge status={d.status} />
      </td>
      <td data-testid="daemon-loop" className={`px-4 py-2.5 whitespace-nowrap ${muted}`} title={d.error}>
        {loopLabel(d)}
      </td>
      <td className={`px-4 py-2.5 font-mono text-xs whitespace-nowrap ${muted}`}>{d.model}</td>
      <td data-testid="daemon-queue-count" data-count={d.queued_event_count} className={`px-4 py-2.5 text-right whitespace-nowrap tabular-nums ${muted}`}>
        {d.queued_event_count}
        {d.event_queue_capacity > 0 && <span className="text-zinc-400 dark:text-zinc-500"> / {d.event_queue_capacity.toLocaleString("en")}</span>}
      </td>
      <td className={`px-4 py-2.5 text-right tabular-nums ${muted}`}>{d.total_iterations}</td>
      <td className={`px-4 py-2.5 whitespace-nowrap ${muted}`}>
        {last ? (
          <time dateTime={last} title={new Date(last).toLocaleString()}>
            {formatRelative(last, now)}
          </time>
        ) : (
          "—"
        )}
      </td>
      <td className="max-w-64 px-4 py-2.5">
        {/* rtl + bdi: a long path is cut at its start, so its last parts show */}
        <span dir="rtl" data-testid="daemon-root" className={`block truncate text-left font-mono text-xs ${muted}`} title={d.persist_path}>
          <bdi>{rootLabel(d.persist_path, d.id)}</bdi>
        </span>
      </td>
    </tr>
  );
}


/** The root directory, with the daemon's id (already shown beside its name) cut short at its end. */
export function rootLabel(path: string, id: string): string {
  return path.endsWith(id) && id.length > 16 ? `${path.slice(0, path.length - id.length + 15)}…` : path;
}
