import { useState, type FormEvent } from "react";
import type { BusEvent } from "../../../shared/events";
import { Button, fieldClass } from "../components/Button";
import { PageHeader } from "../components/PageHeader";
import { QueryError } from "../components/QueryError";
import { errorMessage } from "../lib/errors";
import { navigate } from "../router/history";
import { Link } from "../router/Link";
import { trpc } from "../trpc";
import { DaemonStatusBadge } from "./DaemonStatusBadge";
import { useDaemonsLiveRefresh } from "./useDaemonsLiveRefresh";

export function DaemonPage({ id }: { id: string }) {
  const utils = trpc.useUtils();
  const snap = trpc.daemons.snapshot.useQuery({ id });
  useDaemonsLiveRefresh(() => void utils.daemons.snapshot.invalidate({ id }), id);
  const crumbs = <Link href="/daemons" className="hover:underline">Daemons</Link>;
  if (snap.isPending) return <PageHeader title="Daemon" crumbs={crumbs} description="" />;
  if (snap.isError || !snap.data) {
    return (
      <>
        <PageHeader title="Daemon" crumbs={crumbs} description="" />
        <QueryError title="Cannot load this daemon" error={snap.error} onRetry={() => void snap.refetch()} />
      </>
    );
  }
  const d = snap.data;
  const pending = (d as { pending_events?: Array<{ seq: number; enqueued_at: string; payload: unknown }> }).pending_events ?? [];
  return (
    <>
      <PageHeader title={d.name} crumbs={crumbs} description={`${d.model} · ${d.persist_path}`} actions={<Actions id={id} status={d.status} />} />
      <div className="mt-4 flex flex-wrap items-center gap-3 text-sm text-zinc-600 dark:text-zinc-400">
        <DaemonStatusBadge status={d.status} loop={d.loop_status} state={d.daemon_state} />
        <span data-testid="daemon-queue-depth" className="tabular-nums">{d.queued_event_count} queued of {d.event_queue_capacity}</span>
        <span className="tabular-nums">{d.total_iterations} turns</span>
        {d.error && <span role="alert" className="text-red-600">{d.error}</span>}
      </div>
      <div className="mt-6 grid gap-6 lg:grid-cols-2">
        <section>
          <h2 className="text-sm font-semibold">Queue</h2>
          <ol data-testid="daemon-queue" className="mt-2 space-y-1 text-sm">
            {d.inflight_event && <QueueRow label="in flight" seq={d.inflight_event.seq} payload={d.inflight_event.payload} />}
            {pending.map((e) => <QueueRow key={e.seq} label="pending" seq={e.seq} payload={e.payload} />)}
            {!d.inflight_event && pending.length === 0 && <li className="text-zinc-500">Empty.</li>}
          </ol>
          <TriggerForm id={id} running={d.status === "running"} />
        </section>
        <Lifecycle id={id} />
      </div>
      <details className="mt-6 text-sm">
        <summary className="cursor-pointer text-zinc-600 dark:text-zinc-400">Snapshot (daemon.json)</summary>
        <pre className="mt-2 max-h-96 overflow-auto rounded-xl bg-zinc-50 p-3 font-mono text-xs dark:bg-zinc-950">{JSON.stringify(d, null, 2)}</pre>
      </details>
    </>
  );
}

function QueueRow({ label, seq, payload }: { label: string; seq: number; payload: unknown }) {
  return (
    <li data-testid="daemon-queue-item" className="flex gap-2 rounded border border-zinc-200 px-2 py-1 dark:border-zinc-800">
      <span className="text-xs text-zinc-500 tabular-nums">#{seq}</span>
      <span className={`text-xs ${label === "in flight" ? "text-indigo-600" : "text-zinc-500"}`}>{label}</span>
      <span className="truncate font-mono text-xs">{typeof payload === "string" ? payload : JSON.stringify(payload)}</span>
    </li>
  );
}

function Actions({ id, status }: { id: string; status: string }) {
  const utils = trpc.useUtils();
  const done = () => void utils.daemons.snapshot.invalidate({ id });
  const stop = trpc.daemons.stop.useMutation({ onSuccess: done });
  const resume = trpc.daemons.resume.useMutation({ onSuccess: done });
  const del = trpc.daemons.delete.useMutation({ onSuccess: () => navigate("/daemons") });
  const error = stop.error ?? resume.error ?? del.error;
  return (
    <div className="flex items-center gap-2">
      {status === "running" ? (
        <Button variant="danger" onClick={() => stop.mutate({ id })} disabled={stop.isPending}>Stop</Button>
      ) : (
        <Button variant="primary" onClick={() => resume.mutate({ id })} disabled={resume.isPending}>Resume</Button>
      )}
      <Button variant="ghost" onClick={() => window.confirm("Delete this daemon? Its root directory is kept.") && del.mutate({ id })}>Delete</Button>
      {error && <span role="alert" className="text-sm text-red-600">{errorMessage(error)}</span>}
    </div>
  );
}

/** JSON when it looks like JSON (and must then parse), otherwise the text as is. */
export function parsePayload(text: string): { ok: true; value: unknown } | { ok: false; error: string } {
  const t = text.trim();
  if (!t) return { ok: false, error: "Write a payload: text, or JSON." };
  if (!t.startsWith("{") && !t.startsWith("[")) return { ok: true, value: text };
  try {
    return { ok: true, value: JSON.parse(t) };
  } catch (err) {
    return { ok: false, error: `Not valid JSON: ${(err as Error).message}` };
  }
}

function TriggerForm({ id, running }: { id: string; running: boolean }) {
  const utils = trpc.useUtils();
  const [text, setText] = useState("");
  const [error, setError] = useState<string | null>(null);
  const trigger = trpc.daemons.trigger.useMutation({
    onSuccess: () => {
      setText("");
      void utils.daemons.snapshot.invalidate({ id });
    },
  });
  const submit = (e: FormEvent) => {
    e.preventDefault();
    const parsed = parsePayload(text);
    if (!parsed.ok) return setError(parsed.error);
    setError(null);
    trigger.mutate({ id, payload: parsed.value });
  };
  return (
    <form onSubmit={submit} className="mt-4 space-y-2">
      <label className="block text-sm font-medium text-zinc-700 dark:text-zinc-300">
        Trigger
        <textarea aria-label="Trigger payload" value={text} onChange={(e) => setText(e.target.value)} rows={3} placeholder='Text, or JSON such as {"issue": 42}' className={`${fieldClass} mt-1 font-mono`} aria-invalid={error ? true : undefined} />
      </label>
      <div className="flex items-center gap-3">
        <Button type="submit" variant="primary" disabled={!running || trigger.isPending}>Send trigger</Button>
        {!running && <span className="text-xs text-zinc-500">Resume the daemon to trigger it.</span>}
        {(error ?? trigger.error) && <span role="alert" className="text-sm text-red-600">{error ?? errorMessage(trigger.error)}</span>}
      </div>
    </form>
  );
}

function Lifecycle({ id }: { id: string }) {
  const [events, setEvents] = useState<BusEvent[]>([]);
  trpc.daemons.onEvents.useSubscription(
    { daemonId: id },
    { onData: ({ data }) => setEvents((prev) => [...prev, ...(data as BusEvent[]).filter((e) => !prev.some((p) => p.id === e.id))].slice(-300)) },
  );
  return (
    <section>
      <h2 className="text-sm font-semibold">Lifecycle and turns</h2>
      <ol data-testid="daemon-events" className="mt-2 max-h-96 space-y-1 overflow-y-auto text-sm">
        {events.length === 0 && <li className="text-zinc-500">No events yet.</li>}
        {[...events].reverse().map((e) => (
          <li key={e.id} data-testid="daemon-event" data-type={e.type} className="rounded border border-zinc-200 px-2 py-1 dark:border-zinc-800">
            <span className="font-mono text-xs text-zinc-500">{e.type.replace("daemon.", "")}</span>{" "}
            <span className="text-zinc-800 dark:text-zinc-200">{(e.payload as { text?: string; summary?: string }).text ?? (e.payload as { summary?: string }).summary ?? ""}</span>
          </li>
        ))}
      </ol>
    </section>
  );
}
