import { useId } from "react";
import type { StrategyEntry, StrategySource } from "../../../shared/strategy";
import { AlertIcon } from "../components/icons";

const SOURCE_LABELS: Record<StrategySource, string> = {
  cwd: "In this directory (strategies/)",
  comma: "In this directory (.comma/strategies/)",
  manifest: "From the project manifest",
  home: "Your strategies (~/.switchyard/strategies/)",
  bundled: "Examples (mock models, no API key)",
};
const SOURCE_ORDER: StrategySource[] = ["cwd", "comma", "manifest", "home", "bundled"];

/** The strategies of a directory as radio cards, grouped by where they were found. */
export function StrategyPicker({ strategies, value, onChange, invalid, describedBy }: { strategies: StrategyEntry[]; value: string; onChange: (path: string) => void; invalid: boolean; describedBy?: string }) {
  const groups = SOURCE_ORDER.map((source) => ({ source, entries: strategies.filter((s) => s.source === source) })).filter((g) => g.entries.length > 0);
  return (
    <div role="radiogroup" aria-label="Strategy" aria-invalid={invalid || undefined} aria-describedby={describedBy} className="space-y-4">
      {groups.map((group) => (
        <fieldset key={group.source}>
          <legend className="mb-1.5 text-xs font-medium text-zinc-500 dark:text-zinc-400">{SOURCE_LABELS[group.source]}</legend>
          <div className="grid gap-2 sm:grid-cols-2">
            {group.entries.map((entry) => (
              <StrategyOption key={entry.path} entry={entry} checked={entry.path === value} onChange={onChange} />
            ))}
          </div>
        </fieldset>
      ))}
    </div>
  );
}

function StrategyOption({ entry, checked, onChange }: { entry: StrategyEntry; checked: boolean; onChange: (path: string) => void }) {
  const descId = `strategy-desc-${useId().replace(/:/g, "")}`;
  return (
    <label
      data-testid="strategy-option"
      data-strategy-id={entry.id}
      className="group relative flex cursor-pointer flex-col rounded-lg border border-zinc-200 bg-white px-3 py-2.5 shadow-sm transition-colors hover:border-zinc-300 has-checked:border-indigo-500 has-checked:ring-1 has-checked:ring-indigo-500 has-focus-visible:outline-2 has-focus-visible:outline-offset-2 has-focus-visible:outline-indigo-500 dark:border-zinc-800 dark:bg-zinc-900/60 dark:hover:border-zinc-700 dark:has-checked:border-indigo-400 dark:has-checked:ring-indigo-400"
    >
      <input type="radio" name="strategy" value={entry.path} checked={checked} onChange={() => onChange(entry.path)} aria-label={entry.name} aria-describedby={descId} className="sr-only" />
      <span className="flex items-center justify-between gap-2">
        <span className="truncate text-sm font-medium text-zinc-900 dark:text-zinc-100">{entry.name}</span>
        <span className="shrink-0 font-mono text-[11px] text-zinc-400 dark:text-zinc-500">{entry.id}</span>
      </span>
      {entry.valid ? (
        <span id={descId} className="mt-0.5 line-clamp-2 text-xs text-zinc-600 dark:text-zinc-400">{entry.description ?? "No description."}</span>
      ) : (
        <span id={descId} className="mt-0.5 flex items-start gap-1 text-xs text-red-700 dark:text-red-400">
          <AlertIcon width={12} height={12} className="mt-0.5 shrink-0" />
          <span className="line-clamp-2">{entry.error ?? "Invalid strategy"}</span>
        </span>
      )}
      {entry.valid && entry.warnings.length > 0 && (
        <span className="mt-1 text-[11px] text-amber-700 dark:text-amber-400">
          {entry.warnings.length} {entry.warnings.length === 1 ? "warning" : "warnings"}
        </span>
      )}
    </label>
  );
}
