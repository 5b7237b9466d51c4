import { useEffect, useMemo, useState, type FormEvent, type ReactNode } from "react";
import { Button, fieldClass } from "../components/Button";
import { PlayIcon } from "../components/icons";
import { PageHeader } from "../components/PageHeader";
import { InlineError, QueryError } from "../components/QueryError";
import { useDebounced } from "../hooks/useDebounced";
import { errorMessage, fieldErrors } from "../lib/errors";
import { navigate } from "../router/history";
import { Link } from "../router/Link";
import { trpc } from "../trpc";
import { prepareInput, validateLaunch, type LaunchErrors, type LaunchValues } from "./launch-form";
import { StrategyPicker } from "./StrategyPicker";
import { StrategyPreview } from "./StrategyPreview";

/** `/runs/new?strategy=<id or path>&cwd=<dir>` pre-fills the form (Run again). */
function initialValues(): LaunchValues {
  const params = new URLSearchParams(window.location.search);
  return { cwd: params.get("cwd") ?? "", strategyPath: params.get("strategy") ?? "", input: params.get("input") ?? "", modelOverride: "" };
}

/** Launch a strategy: pick it, give it an input (and maybe a model), prepare + start, watch it. */
export default function LaunchRunPage() {
  const [values, setValues] = useState(initialValues);
  const [errors, setErrors] = useState<LaunchErrors>({});
  const set = <K extends keyof LaunchValues>(key: K, value: LaunchValues[K]) => {
    setValues((v) => ({ ...v, [key]: value }));
    setErrors((e) => ({ ...e, [key]: undefined, form: undefined }));
  };

  const cwd = useDebounced(values.cwd.trim(), 400);
  const strategies = trpc.strategies.list.useQuery(cwd ? { cwd } : {}, { retry: false, placeholderData: (prev) => prev });
  useResolveStrategyParam(strategies.data, values.strategyPath, (path) => setValues((v) => ({ ...v, strategyPath: path })));

  const prepare = trpc.runs.prepare.useMutation();
  const start = trpc.runs.start.useMutation();
  const busy = prepare.isPending || start.isPending;

  const submit = async (e: FormEvent) => {
    e.preventDefault();
    const found = validateLaunch(values, strategies.data);
    setErrors(found);
    if (Object.values(found).some(Boolean)) {
      const first = found.cwd ? "#cwd" : found.strategyPath ? 'input[name="strategy"]' : undefined;
      if (first) document.querySelector<HTMLElement>(first)?.focus();
      return;
    }
    try {
      const prepared = await prepare.mutateAsync(prepareInput(values));
      await start.mutateAsync({ runId: prepared.runId, input: values.input });
      navigate(`/runs/${encodeURIComponent(prepared.runId)}`);
    } catch (err) {
      const fields = fieldErrors(err);
      setErrors({ cwd: fields.cwd, modelOverride: fields.modelOverride, strategyPath: fields.strategyPath, form: errorMessage(err) });
    }
  };

  const selected = strategies.data?.find((s) => s.path === values.strategyPath);
  return (
    <>
      <PageHeader title="New run" crumbs={<Link href="/runs" className="hover:underline">Runs</Link>} description="Pick a strategy, give it an input, and watch every agent work live." />
      <form noValidate onSubmit={(e) => void submit(e)} className="mt-6 grid gap-6 lg:grid-cols-[minmax(0,1fr)_minmax(0,26rem)]">
        <div className="space-y-6">
          <Field id="cwd" label="Working directory" error={errors.cwd ?? (strategies.isError ? errorMessage(strategies.error) : undefined)} hint="Where the run works, and where its strategies/ are looked up. Empty: the server's directory.">
            <input id="cwd" name="cwd" value={values.cwd} onChange={(e) => set("cwd", e.target.value)} placeholder="Server's directory" spellCheck={false} autoComplete="off" aria-invalid={!!errors.cwd || undefined} className={`${fieldClass} font-mono`} />
          </Field>
          <Field id="strategy" label="Strategy" error={errors.strategyPath} asGroup>
            {strategies.isPending ? (
              <div aria-busy="true" aria-label="Loading strategies" className="grid gap-2 sm:grid-cols-2">
                {[0, 1, 2, 3].map((i) => (
                  <div key={i} className="h-16 animate-pulse rounded-lg bg-zinc-100 dark:bg-zinc-800" />
                ))}
              </div>
            ) : strategies.isError && !strategies.data ? (
              <QueryError title="Cannot list the strategies" error={strategies.error} onRetry={() => void strategies.refetch()} />
            ) : (
              <StrategyPicker strategies={strategies.data ?? []} value={values.strategyPath} onChange={(path) => set("strategyPath", path)} invalid={!!errors.strategyPath} describedBy={errors.strategyPath ? "strategy-error" : undefined} />
            )}
          </Field>
          <Field id="input" label="Input" hint="The first step's message. Some strategies ask for it as they run instead; then it may stay empty.">
            <textarea id="input" name="input" rows={4} value={values.input} onChange={(e) => set("input", e.target.value)} placeholder="What should the agents work on?" className={fieldClass} />
          </Field>
          <ModelField value={values.modelOverride} onChange={(v) => set("modelOverride", v)} error={errors.modelOverride} />
          <div className="flex flex-wrap items-center gap-3 border-t border-zinc-200 pt-5 dark:border-zinc-800">
            <Button type="submit" variant="primary" disabled={busy}>
              <PlayIcon width={14} height={14} />
              {busy ? "Starting…" : "Start run"}
            </Button>
            <Link href="/runs" className="text-sm text-zinc-600 hover:underline dark:text-zinc-400">
              Cancel
            </Link>
          </div>
          {errors.form && <InlineError id="form-error">{errors.form}</InlineError>}
        </div>
        <aside aria-label="Strategy preview" className="self-start overflow-hidden rounded-xl border border-zinc-200 bg-white shadow-sm lg:sticky lg:top-6 dark:border-zinc-800 dark:bg-zinc-900/60">
          <h2 className="border-b border-zinc-200 px-4 py-3 text-sm font-semibold dark:border-zinc-800">{selected ? "Preview" : "Strategy"}</h2>
          <StrategyPreview path={selected?.valid ? selected.path : undefined} cwd={cwd || undefined} />
          {selected && !selected.valid && (
            <div className="px-4 pb-4">
              <QueryError title={`"${selected.name}" cannot run`} error={new Error(selected.error ?? "Invalid strategy")} hint="Fix the file (the message names the line), then pick it again." />
            </div>
          )}
        </aside>
      </form>
    </>
  );
}

/** A `?strategy=` given as an id (or file path) becomes the matching entry's path once listed. */
function useResolveStrategyParam(list: Array<{ id: string; path: string }> | undefined, current: string, setPath: (path: string) => void) {
  useEffect(() => {
    if (!list || !current || list.some((s) => s.path === current)) return;
    const match = list.find((s) => s.id === current || s.path.endsWith(`/${current}`));
    if (match) setPath(match.path);
  }, [list, current, setPath]);
}

function ModelField({ value, onChange, error }: { value: string; onChange: (v: string) => void; error?: string }) {
  const models = trpc.models.list.useQuery(undefined, { staleTime: 60_000 });
  const groups = useMemo(() => {
    const byProvider = new Map<string, Array<{ id: string; label: string }>>();
    for (const m of models.data ?? []) {
      if (!m.available) continue;
      byProvider.set(m.provider, [...(byProvider.get(m.provider) ?? []), { id: m.id, label: m.label }]);
    }
    return [...byProvider.entries()];
  }, [models.data]);
  const unavailable = (models.data ?? []).filter((m) => !m.available);
  const keys = [...new Set(unavailable.flatMap((m) => /needs (\w+)/.exec(m.reason ?? "")?.[1] ?? []))];
  const more = unavailable.length ? ` ${unavailable.length} more appear once their API key is set${keys.length ? ` (${keys.join(", ")})` : ""}.` : "";
  const hint = models.isError ? `Cannot load the models (${errorMessage(models.error)}); the strategy's own models will be used.` : `Replaces every agent's model for this run.${more}`;
  return (
    <Field id="model" label="Model" error={error} hint={hint}>
      <select id="model" name="model" value={value} onChange={(e) => onChange(e.target.value)} disabled={models.isPending && !models.data} aria-invalid={!!error || undefined} className={fieldClass}>
        <option value="">Strategy default (each agent's own model)</option>
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
    </Field>
  );
}

function Field({ id, label, hint, error, asGroup, children }: { id: string; label: string; hint?: string; error?: string; asGroup?: boolean; children: ReactNode }) {
  return (
    <div>
      {asGroup ? (
        <div id={`${id}-label`} className="mb-1.5 text-sm font-medium">
          {label}
        </div>
      ) : (
        <label htmlFor={id} className="mb-1.5 block text-sm font-medium">
          {label}
        </label>
      )}
      {children}
      {error ? <InlineError id={`${id}-error`}>{error}</InlineError> : hint && <p className="mt-1.5 text-xs text-zinc-500 dark:text-zinc-400">{hint}</p>}
    </div>
  );
}
