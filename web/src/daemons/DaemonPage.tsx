import type { ReactNode } from "react";
import { Cmd } from "../components/EmptyState";
import { DaemonsIcon } from "../components/icons";
import { EntityNotFound } from "../components/NotFound";
import { PageHeader } from "../components/PageHeader";
import { QueryError } from "../components/QueryError";
import { useNow } from "../hooks/useNow";
import { isNotFound } from "../lib/errors";
import { formatRelative } from "../lib/format";
import { Link } from "../router/Link";
import { trpc } from "../trpc";
import { DaemonActions } from "./DaemonActions";
import { DaemonLifecycle, DaemonTurns } from "./DaemonActivity";
import { DaemonQueue } from "./DaemonQueue";
import { DaemonStatusBadge, loopLabel } from "./DaemonStatusBadge";
import { TriggerForm } from "./TriggerForm";
import { useDaemonEvents } from "./useDaemonEvents";
import { useDaemonsLiveRefresh } from "./useDaemonsLiveRefresh";

/** While events are queued, the snapshot is also polled this often (a turn starting publishes nothing). */
const BUSY_POLL_MS = 2000;

/** `/daemons/:id`: status and controls, the queue, a trigger form, its turns and lifecycle, the snapshot. */
export default function DaemonPage({ id }: { id: string }) {
  const utils = trpc.useUtils();
  const snap = trpc.daemons.snapshot.useQuery({ id }, { refetchInterval: (q) => (q.state.data && q.state.data.queued_event_count > 0 ? BUSY_POLL_MS : false) });
  // `id` may be the daemon's name (/daemons/<name>): events carry its id
  useDaemonsLiveRefresh(() => void utils.daemons.snapshot.invalidate({ id }), snap.data?.id ?? id, 150);
  const stream = useDaemonEvents(id);
  const now = useNow(true, 5000);
  const crumbs = (
    <Link href="/daemons" className="hover:underline">
      Daemons
    </Link>
  );
  if (snap.isPending) return <PageHeader title="Daemon" crumbs={crumbs} description={<span aria-busy="true">Loading…</span>} />;
  if (snap.isError && !snap.data) {
    if (isNotFound(snap.error)) {
      return (
        <EntityNotFound kind="daemon" id={id} list={{ href: "/daemons", label: "Daemons" }} Icon={DaemonsIcon}>
          No daemon has the id or name <Cmd>{id}</Cmd>.
        </EntityNotFound>
      );
    }
    return (
      <>
        <PageHeader title="Daemon" crumbs={crumbs} description={<span className="font-mono">{id}</span>} />
        <QueryError title="Cannot load this daemon" error={snap.error} onRetry={() => void snap.refetch()} />
      </>
    );
  }
  const d = snap.data;
  return (
    <>
      <PageHeader
        title={d.name}
        crumbs={crumbs}
        description={
          <span className="font-mono text-xs">
            {d.id} · {d.model}
          </span>
        }
        actions={<DaemonActions id={id} name={d.name} status={d.status} />}
      />
      <dl data-testid="daemon-facts" className="mt-4 flex flex-wrap items-center gap-x-6 gap-y-2 text-sm text-zinc-600 dark:text-zinc-400">
        <Fact label="Status">
          <DaemonStatusBadge status={d.status} />
        </Fact>
        <Fact label="Loop">
          <span data-testid="daemon-loop">{loopLabel(d)}</span>
        </Fact>
        <Fact label="Turns">
          <span className="tabular-nums">{d.total_iterations}</span>
        </Fact>
        <Fact label="Snapshot">
          {d.saved_at ? (
            <time dateTime={d.saved_at} title={new Date(d.saved_at).toLocaleString()}>
              {formatRelative(d.saved_at, now)}
            </time>
          ) : (
            "not saved yet"
          )}
        </Fact>
        <Fact label="Root">
          <span className="font-mono text-xs break-all">{d.persist_path}</span>
        </Fact>
      </dl>
      {d.error && (
        <p role="alert" data-testid="daemon-error" className="mt-3 rounded-lg border border-red-200 bg-red-50 px-3 py-2 text-sm text-red-800 dark:border-red-900/60 dark:bg-red-950/30 dark:text-red-300">
          {d.error}
        </p>
      )}
      {snap.isError && <p className="mt-2 text-xs text-red-600 dark:text-red-400">Refreshing failed; showing the last known state.</p>}
      <div className="mt-6 grid gap-6 lg:grid-cols-2">
        <div className="space-y-6">
          <DaemonQueue inflight={d.inflight_event} pending={d.pending_events} capacity={d.event_queue_capacity} now={now} />
          <TriggerForm id={id} running={d.status === "running"} />
        </div>
        <DaemonTurns stream={stream} />
      </div>
      <div className="mt-6">
        <DaemonLifecycle stream={stream} />
      </div>
      <details data-testid="daemon-snapshot" className="group mt-6 rounded-xl border border-zinc-200 bg-white shadow-sm dark:border-zinc-800 dark:bg-zinc-900/60">
        <summary className="cursor-pointer rounded-xl px-4 py-3 text-sm font-semibold select-none hover:bg-zinc-50 dark:hover:bg-zinc-800/40">
          Snapshot <span className="font-normal text-zinc-500 dark:text-zinc-400">(daemon.json and the live queue, as JSON)</span>
        </summary>
        <pre className="max-h-[32rem] overflow-auto border-t border-zinc-200 p-4 font-mono text-xs leading-relaxed text-zinc-800 dark:border-zinc-800 dark:text-zinc-200">{JSON.stringify(d, null, 2)}</pre>
      </details>
    </>
  );
}

function Fact({ label, children }: { label: string; children: ReactNode }) {
  return (
    <div className="flex items-center gap-2">
      <dt className="text-xs text-zinc-500 dark:text-zinc-400">{label}</dt>
      <dd>{children}</dd>
    </div>
  );
}
