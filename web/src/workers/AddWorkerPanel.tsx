import { useState, type FormEvent } from "react";
import { Button, fieldClass } from "../components/Button";
import { CopyButton } from "../components/CopyButton";
import { errorMessage, fieldErrors } from "../lib/errors";
import { trpc } from "../trpc";
import { workerCommand } from "./worker-format";

const card = "mt-6 rounded-xl border border-zinc-200 bg-white p-5 shadow-sm dark:border-zinc-800 dark:bg-zinc-900/60";

/**
 * Register a worker: a name, then its token, shown this once with the exact `yard worker` line to
 * run on that machine. A name that exists gets a new token (its old one stops working): said first.
 */
export function AddWorkerPanel({ initialName = "", existing, onClose }: { initialName?: string; existing: ReadonlySet<string>; onClose: () => void }) {
  const utils = trpc.useUtils();
  const create = trpc.workers.createToken.useMutation({ onSuccess: () => void utils.workers.list.invalidate() });
  const [name, setName] = useState(initialName);
  const trimmed = name.trim();
  const submit = (e: FormEvent) => {
    e.preventDefault();
    if (trimmed) create.mutate({ name: trimmed });
  };
  if (create.data) return <TokenOnce name={create.data.name} token={create.data.token} onDone={onClose} />;
  const replaces = existing.has(trimmed);
  const error = create.error ? (fieldErrors(create.error).name ?? errorMessage(create.error)) : null;
  return (
    <form onSubmit={submit} data-testid="add-worker" aria-labelledby="add-worker-title" className={card}>
      <h2 id="add-worker-title" className="text-sm font-semibold">Add a worker</h2>
      <p className="mt-1 text-sm text-zinc-600 dark:text-zinc-400">Name the machine; it gets its own token, shown once, to start <code className="font-mono text-xs">yard worker</code> there.</p>
      <div className="mt-4 flex flex-wrap items-end gap-3">
        <label className="block w-64 text-sm font-medium text-zinc-700 dark:text-zinc-300">
          Name
          <input
            autoFocus
            value={name}
            onChange={(e) => setName(e.target.value)}
            placeholder="build-2"
            aria-invalid={error ? true : undefined}
            aria-describedby={error ? "add-worker-error" : replaces ? "add-worker-replaces" : undefined}
            className={`${fieldClass} mt-1 font-mono`}
          />
        </label>
        <Button type="submit" variant={replaces ? "danger" : "primary"} disabled={!trimmed || create.isPending}>
          {create.isPending ? "Creating…" : replaces ? "Replace its token" : "Create token"}
        </Button>
        <Button variant="ghost" onClick={onClose}>Cancel</Button>
      </div>
      {replaces && !error && (
        <p id="add-worker-replaces" className="mt-2 text-sm text-amber-700 dark:text-amber-400">
          {trimmed} is registered: a new token replaces its current one, and its connection ends until it uses the new one.
        </p>
      )}
      {error && (
        <p id="add-worker-error" role="alert" className="mt-2 text-sm text-red-700 dark:text-red-400">
          {error}
        </p>
      )}
    </form>
  );
}

/** The token, once: the page forgets it at "Done" and the server keeps only its hash. */
function TokenOnce({ name, token, onDone }: { name: string; token: string; onDone: () => void }) {
  const command = workerCommand(window.location.origin, token);
  return (
    <section data-testid="worker-token-once" aria-labelledby="worker-token-title" className={`${card} border-emerald-300 dark:border-emerald-800/70`}>
      <h2 id="worker-token-title" className="text-sm font-semibold">
        Worker <span className="font-mono">{name}</span> is registered
      </h2>
      <p className="mt-1 text-sm text-zinc-600 dark:text-zinc-400">Its token is shown only this once: copy it now. The server keeps only its hash.</p>
      <Copyable testId="worker-token" label="Copy the token" text={token} />
      <p className="mt-4 text-sm text-zinc-600 dark:text-zinc-400">
        On <b className="font-medium text-zinc-800 dark:text-zinc-200">{name}</b>, with Switchyard installed, run:
      </p>
      <Copyable testId="worker-command" label="Copy the command" text={command} />
      <p className="mt-2 text-xs text-zinc-500 dark:text-zinc-400">
        Add <code className="font-mono">--capacity 8</code> (agents at a time) or <code className="font-mono">--labels gpu</code> as needed. It shows as connected here once it has said hello.
      </p>
      <div className="mt-4">
        <Button onClick={onDone}>Done</Button>
      </div>
    </section>
  );
}

function Copyable({ testId, label, text }: { testId: string; label: string; text: string }) {
  return (
    <div className="mt-2 flex items-start gap-2">
      <code data-testid={testId} className="min-w-0 flex-1 rounded-md bg-zinc-100 px-3 py-2 font-mono text-xs break-all text-zinc-800 select-all dark:bg-zinc-800 dark:text-zinc-200">
        {text}
      </code>
      <CopyButton text={text} label={label} />
    </div>
  );
}
