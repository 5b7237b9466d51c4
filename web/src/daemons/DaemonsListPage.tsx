import { useState, type FormEvent } from "react";
import { Button, fieldClass } from "../components/Button";
import { Cmd, EmptyState } from "../components/EmptyState";
import { DaemonsIcon } from "../components/icons";
import { PageHeader } from "../components/PageHeader";
import { QueryError } from "../components/QueryError";
import { errorMessage } from "../lib/errors";
import { navigate } from "../router/history";
import { Link } from "../router/Link";
import { trpc } from "../trpc";
import { DaemonStatusBadge } from "./DaemonStatusBadge";
import { useDaemonsLiveRefresh } from "./useDaemonsLiveRefresh";

export function DaemonsListPage() {
  const utils = trpc.useUtils();
  const daemons = trpc.daemons.list.useQuery();
  useDaemonsLiveRefresh(() => void utils.daemons.list.invalidate());
  const [showForm, setShowForm] = useState(false);
  const list = daemons.data ?? [];
  return (
    <>
      <PageHeader
        title="Daemons"
        description="Long-lived agents that wake on a message, a file change or a timer, with a durable FIFO queue."
        actions={<Button variant="primary" onClick={() => setShowForm((v) => !v)}>{showForm ? "Close" : "New daemon"}</Button>}
      />
      {showForm && <SpawnDaemonForm />}
      {daemons.isPending ? (
        <p className="mt-6 text-sm text-zinc-500">Loading daemons…</p>
      ) : daemons.isError && !daemons.data ? (
        <QueryError title="Cannot load the daemons" error={daemons.error} onRetry={() => void daemons.refetch()} />
      ) : list.length === 0 ? (
        !showForm && (
          <EmptyState Icon={DaemonsIcon} title="No daemons yet" action={<Button variant="primary" onClick={() => setShowForm(true)}>Spawn a daemon</Button>}>
            Spawn one here or with <Cmd>yard daemon spawn --task "..."</Cmd>; <b>mock/echo</b> needs no API key.
          </EmptyState>
        )
      ) : (
        <div className="mt-6 overflow-x-auto rounded-xl border border-zinc-200 bg-white shadow-sm dark:border-zinc-800 dark:bg-zinc-900/60">
          <table data-testid="daemons-table" className="w-full min-w-[44rem] text-left text-sm">
            <thead className="border-b border-zinc-200 text-xs text-zinc-500 uppercase dark:border-zinc-800">
              <tr>
                <th className="px-4 py-2 font-medium">Daemon</th>
                <th className="px-4 py-2 font-medium">Status</th>
                <th className="px-4 py-2 font-medium">Model</th>
                <th className="px-4 py-2 text-right font-medium">Queue</th>
                <th className="px-4 py-2 text-right font-medium">Turns</th>
              </tr>
            </thead>
            <tbody className="divide-y divide-zinc-100 dark:divide-zinc-800">
              {list.map((d) => (
                <tr key={d.id} data-testid="daemon-row">
                  <td className="px-4 py-2.5">
                    <Link href={`/daemons/${d.id}`} className="font-medium text-indigo-700 hover:underline dark:text-indigo-300">{d.name}</Link>
                    <div className="font-mono text-xs text-zinc-500">{d.persist_path}</div>
                  </td>
                  <td className="px-4 py-2.5"><DaemonStatusBadge status={d.status} loop={d.loop_status} state={d.daemon_state} /></td>
                  <td className="px-4 py-2.5 font-mono text-xs">{d.model}</td>
                  <td className="px-4 py-2.5 text-right tabular-nums">{d.queued_event_count} / {d.event_queue_capacity}</td>
                  <td className="px-4 py-2.5 text-right tabular-nums">{d.total_iterations}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
    </>
  );
}

function SpawnDaemonForm() {
  const models = trpc.models.list.useQuery();
  const spawn = trpc.daemons.spawn.useMutation({ onSuccess: (d) => navigate(`/daemons/${d.id}`) });
  const [name, setName] = useState("");
  const [task, setTask] = useState("");
  const [system, setSystem] = useState("");
  const [model, setModel] = useState("mock/echo");
  const [wake, setWake] = useState("");
  const [capacity, setCapacity] = useState("1024");
  const [error, setError] = useState<string | null>(null);
  const submit = (e: FormEvent) => {
    e.preventDefault();
    if (!task.trim()) return setError("Give the daemon a task.");
    const cap = Number(capacity);
    if (!Number.isInteger(cap) || cap < 1) return setError("Queue capacity must be a whole number above 0.");
    if (wake && (!Number.isInteger(Number(wake)) || Number(wake) < 10)) return setError("Wake interval must be at least 10 ms.");
    setError(null);
    spawn.mutate({ task, model, eventQueueCapacity: cap, ...(name.trim() ? { name: name.trim() } : {}), ...(system.trim() ? { system } : {}), ...(wake ? { wakeIntervalMs: Number(wake) } : {}) });
  };
  const label = "block text-sm font-medium text-zinc-700 dark:text-zinc-300";
  const modelIds = models.data?.filter((m) => m.available).map((m) => m.id) ?? ["mock/echo"];
  return (
    <form onSubmit={submit} data-testid="spawn-daemon-form" className="mt-6 grid gap-4 rounded-xl border border-zinc-200 bg-white p-5 shadow-sm sm:grid-cols-2 dark:border-zinc-800 dark:bg-zinc-900/60">
      <label className={label}>
        Name
        <input value={name} onChange={(e) => setName(e.target.value)} placeholder="triage-bot" className={`${fieldClass} mt-1`} />
      </label>
      <label className={label}>
        Model
        <select value={model} onChange={(e) => setModel(e.target.value)} className={`${fieldClass} mt-1`}>
          {[...new Set(["mock/echo", ...modelIds])].map((m) => <option key={m} value={m}>{m}</option>)}
        </select>
      </label>
      <label className={`${label} sm:col-span-2`}>
        Task
        <textarea value={task} onChange={(e) => setTask(e.target.value)} rows={3} placeholder="What should it do with each message?" className={`${fieldClass} mt-1`} />
      </label>
      <label className={`${label} sm:col-span-2`}>
        System prompt (optional)
        <input value={system} onChange={(e) => setSystem(e.target.value)} className={`${fieldClass} mt-1`} />
      </label>
      <label className={label}>
        Wake interval, ms (optional)
        <input value={wake} onChange={(e) => setWake(e.target.value)} inputMode="numeric" className={`${fieldClass} mt-1`} />
      </label>
      <label className={label}>
        Queue capacity
        <input value={capacity} onChange={(e) => setCapacity(e.target.value)} inputMode="numeric" className={`${fieldClass} mt-1`} />
      </label>
      <div className="flex items-center gap-3 sm:col-span-2">
        <Button type="submit" variant="primary" disabled={spawn.isPending}>{spawn.isPending ? "Spawning…" : "Spawn daemon"}</Button>
        {(error ?? spawn.error) && <p role="alert" className="text-sm text-red-600 dark:text-red-400">{error ?? errorMessage(spawn.error)}</p>}
      </div>
    </form>
  );
}
