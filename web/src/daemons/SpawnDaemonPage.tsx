import { useMemo, useState, type FormEvent, type ReactNode } from "react";
import { Button, fieldClass } from "../components/Button";
import { AlertIcon, PlayIcon } from "../components/icons";
import { PageHeader } from "../components/PageHeader";
import { InlineError } from "../components/QueryError";
import { errorMessage } from "../lib/errors";
import { navigate } from "../router/history";
import { Link } from "../router/Link";
import { trpc } from "../trpc";
import { DEFAULT_MODEL, DEFAULT_SPAWN, hasErrors, spawnInput, spawnServerErrors, validateSpawn, type SpawnErrors, type SpawnField, type SpawnValues } from "./spawn-form";

/** The order fields are checked in, to focus the first one with an error. */
const FIELD_ORDER: SpawnField[] = ["name", "task", "system", "model", "wakeIntervalMs", "watchPaths", "capacity", "maxIterations", "persistPath"];

/** `/daemons/new`: spawn a daemon; checked here first, then the server's refusals shown beside the fields. */
export default function SpawnDaemonPage() {
  const utils = trpc.useUtils();
  const [values, setValues] = useState<SpawnValues>(DEFAULT_SPAWN);
  const [errors, setErrors] = useState<SpawnErrors>({});
  const spawn = trpc.daemons.spawn.useMutation();
  const set = (key: SpawnField) => (value: string) => {
    setValues((v) => ({ ...v, [key]: value }));
    setErrors((e) => ({ ...e, [key]: undefined }));
  };

  const submit = async (e: FormEvent) => {
    e.preventDefault();
    const found = validateSpawn(values);
    setErrors(found);
    if (hasErrors(found)) return focusFirst(found);
    try {
      const daemon = await spawn.mutateAsync(spawnInput(values));
      void utils.daemons.list.invalidate();
      navigate(`/daemons/${encodeURIComponent(daemon.id)}`);
    } catch (err) {
      const fromServer = spawnServerErrors(err);
      setErrors(fromServer);
      focusFirst(fromServer);
    }
  };

  const field = (key: SpawnField) => ({ id: `daemon-${key}`, value: values[key], onChange: set(key), error: errors[key] });
  return (
    <>
      <PageHeader title="New daemon" crumbs={<Link href="/daemons" className="hover:underline">Daemons</Link>} description="A long-lived agent: it works on its task, then waits for triggers, file changes or its timer." />
      <form noValidate onSubmit={(e) => void submit(e)} data-testid="spawn-daemon-form" className="mt-6 max-w-3xl space-y-5">
        <div className="grid gap-5 sm:grid-cols-2">
          <TextField label="Name" hint="Optional; the id is used when empty." placeholder="triage-bot" {...field("name")} />
          <ModelField {...field("model")} />
        </div>
        <TextField label="Task" multiline rows={4} hint="Its first prompt; every trigger after that is a new message in the same conversation." placeholder="Summarize each message you receive in one line." {...field("task")} />
        <TextField label="System prompt" multiline rows={2} hint="Optional." {...field("system")} />
        <div className="grid gap-5 sm:grid-cols-3">
          <TextField label="Wake interval (ms)" inputMode="numeric" hint="Optional timer; at least 10." placeholder="none" {...field("wakeIntervalMs")} />
          <TextField label="Queue capacity" inputMode="numeric" hint="Pending plus in flight." {...field("capacity")} />
          <TextField label="Max iterations" inputMode="numeric" hint="Optional, per turn." placeholder="no limit" {...field("maxIterations")} />
        </div>
        <TextField label="Watch paths" multiline rows={2} mono hint="Optional, one per line; a change wakes the daemon. Relative paths are inside its root directory." placeholder="/srv/inbox" {...field("watchPaths")} />
        <TextField label="Root directory" mono hint="Optional; where its state is kept. Default: a new directory under the server's home." placeholder="<home>/daemons/<id>" {...field("persistPath")} />
        <div className="flex flex-wrap items-center gap-3 border-t border-zinc-200 pt-5 dark:border-zinc-800">
          <Button type="submit" variant="primary" disabled={spawn.isPending}>
            <PlayIcon width={14} height={14} />
            {spawn.isPending ? "Spawning…" : "Spawn daemon"}
          </Button>
          <Link href="/daemons" className="text-sm text-zinc-600 hover:underline dark:text-zinc-400">
            Cancel
          </Link>
        </div>
        {errors.form && <FormError code={errors.code}>{errors.form}</FormError>}
      </form>
    </>
  );
}

function focusFirst(errors: SpawnErrors): void {
  const first = FIELD_ORDER.find((key) => errors[key]);
  if (first) document.getElementById(`daemon-${first}`)?.focus();
}

function FormError({ code, children }: { code?: string | undefined; children: ReactNode }) {
  return (
    <div role="alert" data-testid="spawn-error" className="flex items-start gap-2 rounded-xl border border-red-200 bg-red-50 p-4 text-sm text-red-800 dark:border-red-900/60 dark:bg-red-950/30 dark:text-red-300">
      <AlertIcon width={16} height={16} className="mt-0.5 shrink-0" />
      <div className="min-w-0">
        <span className="font-semibold">The server refused to spawn it.</span>
        {code && <span className="ml-2 rounded bg-red-100 px-1.5 py-0.5 font-mono text-xs dark:bg-red-900/40">{code}</span>}
        <p className="mt-1 break-words whitespace-pre-wrap text-red-900/80 dark:text-red-200/80">{children}</p>
      </div>
    </div>
  );
}

type FieldProps = { id: string; label: string; value: string; onChange: (v: string) => void; error?: string | undefined; hint?: string };

function FieldFrame({ id, label, hint, error, children }: { id: string; label: string; hint?: string | undefined; error?: string | undefined; children: ReactNode }) {
  return (
    <div>
      <label htmlFor={id} className="mb-1.5 block text-sm font-medium">
        {label}
      </label>
      {children}
      {error ? <InlineError id={`${id}-error`}>{error}</InlineError> : hint && <p id={`${id}-hint`} className="mt-1.5 text-xs text-zinc-500 dark:text-zinc-400">{hint}</p>}
    </div>
  );
}

function TextField(props: FieldProps & { multiline?: boolean; rows?: number; mono?: boolean; placeholder?: string; inputMode?: "numeric" }) {
  const { id, value, onChange, error, hint, multiline, rows, mono, placeholder, inputMode } = props;
  const shared = {
    id,
    name: id,
    value,
    placeholder,
    spellCheck: false,
    "aria-invalid": error ? true : undefined,
    "aria-describedby": error ? `${id}-error` : hint ? `${id}-hint` : undefined,
    className: `${fieldClass} ${mono ? "font-mono" : ""}`,
  };
  return (
    <FieldFrame id={id} label={props.label} hint={hint} error={error}>
      {multiline ? <textarea rows={rows ?? 3} {...shared} onChange={(e) => onChange(e.target.value)} /> : <input {...shared} inputMode={inputMode} autoComplete="off" onChange={(e) => onChange(e.target.value)} />}
    </FieldFrame>
  );
}

function ModelField({ id, value, onChange, error }: Omit<FieldProps, "label">) {
  const models = trpc.models.list.useQuery(undefined, { staleTime: 60_000 });
  const groups = useMemo(() => {
    const byProvider = new Map<string, Array<{ id: string; label: string }>>();
    for (const m of models.data ?? []) {
      if (!m.available) continue;
      byProvider.set(m.provider, [...(byProvider.get(m.provider) ?? []), { id: m.id, label: m.label }]);
    }
    return [...byProvider.entries()];
  }, [models.data]);
  const listed = groups.some(([, list]) => list.some((m) => m.id === value));
  const hint = models.isError ? `Cannot load the models (${errorMessage(models.error)}).` : "Models whose API key is set; mock/echo answers with its input and needs none.";
  return (
    <FieldFrame id={id} label="Model" hint={hint} error={error}>
      <select id={id} name={id} value={value} onChange={(e) => onChange(e.target.value)} aria-invalid={error ? true : undefined} aria-describedby={error ? `${id}-error` : `${id}-hint`} className={fieldClass}>
        {!listed && <option value={value || DEFAULT_MODEL}>{value || DEFAULT_MODEL}</option>}
        {groups.map(([provider, list]) => (
          <optgroup key={provider} label={provider}>
            {list.map((m) => (
              <option key={m.id} value={m.id}>
                {m.label} — {m.id}
              </option>
            ))}
          </optgroup>
        ))}
      </select>
    </FieldFrame>
  );
}
