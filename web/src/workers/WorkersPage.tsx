import { useState } from "react";
import type { WorkerInfo } from "../../../shared/workers";
import { Button } from "../components/Button";
import { Cmd, EmptyState } from "../components/EmptyState";
import { PlusIcon, WorkersIcon } from "../components/icons";
import { PageHeader } from "../components/PageHeader";
import { QueryError } from "../components/QueryError";
import { useNow } from "../hooks/useNow";
import { errorMessage } from "../lib/errors";
import { formatBytes } from "../lib/format";
import { useLiveRefresh } from "../live/useLiveRefresh";
import { trpc } from "../trpc";
import { AddWorkerPanel } from "./AddWorkerPanel";
import { formatAgo, providerLabel, serverLabel } from "./worker-format";
import { DrainedBadge, WorkerStateBadge } from "./WorkerStateBadge";

/** A connected worker's heartbeat is written every second (no event for it): while one is, the list is asked again this often. */
const HEARTBEAT_POLL_MS = 2000;

/**
 * `/workers`: the `yard worker` machines that run agents for this server, refreshed on `worker.*`
 * events (connected, disconnected, lost, drained, revoked, a new token), and every 2 s while one is
 * connected so its last heartbeat and running agents stay current.
 */
export function WorkersPage() {
  const utils = trpc.useUtils();
  const workers = trpc.workers.list.useQuery(undefined, { refetchInterval: (q) => (q.state.data?.some((w) => w.state === "connected") ? HEARTBEAT_POLL_MS : false) });
  useLiveRefresh((e) => e.type.startsWith("worker."), () => void utils.workers.list.invalidate());
  // the add panel, open with the name to give a token to ("" for a new worker)
  const [adding, setAdding] = useState<string | null>(null);
  const list = workers.data ?? [];
  const add = (label: string) => (
    <Button variant="primary" onClick={() => setAdding("")}>
      <PlusIcon width={15} height={15} />
      {label}
    </Button>
  );
  return (
    <>
      <PageHeader
        title="Workers"
        description="Other machines that run agents' CLIs for this server (yard worker): where agents go, what each one has, whether it is alive."
        actions={list.length > 0 && adding === null ? add("Add worker") : undefined}
      />
      {adding !== null && <AddWorkerPanel key={adding} initialName={adding} existing={new Set(list.filter((w) => w.state !== "revoked").map((w) => w.name))} onClose={() => setAdding(null)} />}
      {workers.isPending ? (
        <p aria-busy="true" className="mt-6 text-sm text-zinc-500 dark:text-zinc-400">Loading workers…</p>
      ) : workers.isError && !workers.data ? (
        <QueryError title="Cannot load the workers" error={workers.error} onRetry={() => void workers.refetch()} />
      ) : list.length === 0 ? (
        adding === null && (
          <EmptyState Icon={WorkersIcon} title="No workers: agents run on this server" action={add("Add a worker")}>
            Run agents on other machines. Make a token here, or on the server with
            <span className="my-2 block"><Cmd>yard worker token create --name build-2</Cmd></span>
            then start the worker on build-2 with
            <span className="my-2 block"><Cmd>yard worker --server {window.location.origin} --token TOKEN</Cmd></span>
            New agents then go to the least-loaded worker that can take them.
          </EmptyState>
        )
      ) : (
        <>
          <WorkersTable workers={list} onNewToken={(name) => setAdding(name)} />
          {workers.isError && <p className="mt-2 text-xs text-red-600 dark:text-red-400">Refreshing failed: {errorMessage(workers.error)}. Showing the last known list.</p>}
        </>
      )}
    </>
  );
}

function WorkersTable({ workers, onNewToken }: { workers: readonly WorkerInfo[]; onNewToken: (name: string) => void }) {
  const now = useNow(true);
  const th = "px-4 py-2.5 font-medium whitespace-nowrap";
  return (
    <div className="mt-6 overflow-x-auto rounded-xl border border-zinc-200 bg-white shadow-sm dark:border-zinc-800 dark:bg-zinc-900/60">
      <table data-testid="workers-table" className="w-full min-w-[60rem] text-left text-sm">
        <thead className="border-b border-zinc-200 text-xs font-medium text-zinc-500 dark:border-zinc-800 dark:text-zinc-400">
          <tr>
            <th scope="col" className={th}>Worker</th>
            <th scope="col" className={th}>State</th>
            <th scope="col" className={`${th} text-right`} title="Agents starting or running on it, of its capacity">Agents</th>
            <th scope="col" className={th}>Labels</th>
            <th scope="col" className={th}>CLIs</th>
            <th scope="col" className={`${th} text-right`}>Free disk</th>
            <th scope="col" className={th}>Last heartbeat</th>
            <th scope="col" className={th}>Server</th>
            <th scope="col" className={th}><span className="sr-only">Actions</span></th>
          </tr>
        </thead>
        <tbody className="divide-y divide-zinc-100 dark:divide-zinc-800">
          {workers.map((w) => <WorkerRow key={w.name} worker={w} now={now} onNewToken={onNewToken} />)}
        </tbody>
      </table>
    </div>
  );
}

function WorkerRow({ worker: w, now, onNewToken }: { worker: WorkerInfo; now: number; onNewToken: (name: string) => void }) {
  const caps = w.capabilities;
  const muted = "text-zinc-600 dark:text-zinc-400";
  const none = <span className="font-sans text-zinc-400 dark:text-zinc-500">—</span>;
  return (
    <tr data-testid="worker-row" data-worker={w.name} data-state={w.state} className="align-top hover:bg-zinc-50 dark:hover:bg-zinc-800/40">
      <td className="max-w-56 px-4 py-2.5">
        <div className="truncate font-medium text-zinc-900 dark:text-zinc-100">{w.name}</div>
        <div data-testid="worker-hostname" className="truncate font-mono text-xs text-zinc-500 dark:text-zinc-400" title={caps ? `${caps.hostname}: ${caps.home}` : undefined}>
          {caps?.hostname ?? "not seen yet"}
        </div>
      </td>
      <td className="px-4 py-2.5">
        <div className="flex flex-wrap items-center gap-1.5">
          <WorkerStateBadge state={w.state} />
          {w.drained && w.state !== "revoked" && <DrainedBadge />}
        </div>
      </td>
      <td data-testid="worker-agents" className={`px-4 py-2.5 text-right whitespace-nowrap tabular-nums ${muted}`}>
        {w.runningAgents}
        <span className="text-zinc-400 dark:text-zinc-500"> / {caps ? caps.capacity : "–"}</span>
      </td>
      <td className="px-4 py-2.5">
        {caps && caps.labels.length > 0 ? (
          <div data-testid="worker-labels" className="flex max-w-40 flex-wrap gap-1">
            {caps.labels.map((l) => <span key={l} className="rounded bg-zinc-100 px-1.5 py-0.5 font-mono text-xs text-zinc-700 dark:bg-zinc-800 dark:text-zinc-300">{l}</span>)}
          </div>
        ) : none}
      </td>
      <td data-testid="worker-clis" className={`px-4 py-2.5 font-mono text-xs ${muted}`}>
        {caps && caps.providers.length > 0 ? caps.providers.map((p) => <div key={p.name} className="whitespace-nowrap" title={p.version ?? `${p.command}: no --version`}>{providerLabel(p)}</div>) : caps ? "none found" : none}
      </td>
      <td className={`px-4 py-2.5 text-right whitespace-nowrap tabular-nums ${muted}`}>{caps?.diskFree != null ? formatBytes(caps.diskFree) : none}</td>
      <td data-testid="worker-heartbeat" className={`px-4 py-2.5 whitespace-nowrap ${muted}`}>
        {w.heartbeatAt ? <time dateTime={w.heartbeatAt} title={new Date(w.heartbeatAt).toLocaleString()}>{formatAgo(w.heartbeatAt, now)}</time> : "never"}
      </td>
      <td className={`px-4 py-2.5 font-mono text-xs whitespace-nowrap ${muted}`} title={w.server ?? undefined}>{w.server ? serverLabel(w.server) : none}</td>
      <td className="px-4 py-1 text-right whitespace-nowrap">
        <WorkerActions worker={w} onNewToken={onNewToken} />
      </td>
    </tr>
  );
}

/** Drain or undrain; revoke (confirmed first); a new token for one never connected or revoked. */
function WorkerActions({ worker: w, onNewToken }: { worker: WorkerInfo; onNewToken: (name: string) => void }) {
  const utils = trpc.useUtils();
  const refresh = () => void utils.workers.list.invalidate();
  const drain = trpc.workers.drain.useMutation({ onSuccess: refresh });
  const revoke = trpc.workers.revoke.useMutation({ onSuccess: refresh });
  const failed = drain.error ?? revoke.error;
  const revoked = w.state === "revoked";
  return (
    <>
      {!revoked && (
        <Button variant="ghost" onClick={() => drain.mutate({ name: w.name, drained: !w.drained })} disabled={drain.isPending} title={w.drained ? "New agents may go to it again" : "No new agents go to it; the running ones finish"}>
          {w.drained ? "Undrain" : "Drain"}
        </Button>
      )}
      {(revoked || w.state === "new") && <Button variant="ghost" onClick={() => onNewToken(w.name)}>New token</Button>}
      {!revoked && (
        <Button
          variant="ghost"
          disabled={revoke.isPending}
          onClick={() => {
            const running = w.runningAgents > 0 ? ` It runs ${w.runningAgents} agent${w.runningAgents === 1 ? "" : "s"} now.` : "";
            if (window.confirm(`Revoke ${w.name}? Its token stops working and its connection is cut now.${running} A new token brings it back.`)) revoke.mutate({ name: w.name });
          }}
        >
          Revoke
        </Button>
      )}
      {failed && <div role="alert" className="mt-1 text-xs text-red-600 dark:text-red-400">{errorMessage(failed)}</div>}
    </>
  );
}
