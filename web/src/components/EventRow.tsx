import { memo, useState } from "react";
import type { BusEvent } from "../../../shared/events";
import { eventDomain, formatTime, scopeBadges, summarize } from "../lib/format";
import type { ScopeNames } from "../live/useScopeNames";
import { ChevronIcon } from "./icons";

const DOMAIN_COLORS: Record<string, string> = {
  server: "bg-sky-50 text-sky-700 ring-sky-600/20 dark:bg-sky-400/10 dark:text-sky-300 dark:ring-sky-400/20",
  system: "bg-zinc-100 text-zinc-700 ring-zinc-500/20 dark:bg-zinc-400/10 dark:text-zinc-300 dark:ring-zinc-400/20",
  run: "bg-indigo-50 text-indigo-700 ring-indigo-600/20 dark:bg-indigo-400/10 dark:text-indigo-300 dark:ring-indigo-400/20",
  agent: "bg-violet-50 text-violet-700 ring-violet-600/20 dark:bg-violet-400/10 dark:text-violet-300 dark:ring-violet-400/20",
  daemon: "bg-amber-50 text-amber-800 ring-amber-600/20 dark:bg-amber-400/10 dark:text-amber-300 dark:ring-amber-400/20",
  inbox: "bg-emerald-50 text-emerald-700 ring-emerald-600/20 dark:bg-emerald-400/10 dark:text-emerald-300 dark:ring-emerald-400/20",
};
const FAILED = "bg-red-50 text-red-700 ring-red-600/20 dark:bg-red-400/10 dark:text-red-300 dark:ring-red-400/20";

function typeClass(type: string): string {
  if (/\.(failed|errored|crashed)$/.test(type)) return FAILED;
  return DOMAIN_COLORS[eventDomain(type)] ?? DOMAIN_COLORS.system!;
}

/** What a scope badge shows: an agent's alias and a daemon's name when known, a long id's start (all of it on hover). */
function scopeName(label: string, id: string, names: ScopeNames | undefined): string {
  const name = label === "agent" ? names?.agents.get(id) : label === "daemon" ? names?.daemons.get(id) : undefined;
  return name ?? (id.length > 16 ? `${id.slice(0, 8)}…` : id);
}

/** One event: id, time, type, scope, a one-line summary; click (or Enter) for the full JSON. */
export const EventRow = memo(function EventRow({ event, names }: { event: BusEvent; names?: ScopeNames }) {
  const [open, setOpen] = useState(false);
  const detailsId = `event-${event.id}-details`;
  return (
    <li data-testid="event-row" data-event-id={event.id} data-event-type={event.type} className="border-b border-zinc-100 last:border-b-0 dark:border-zinc-800/70">
      <button
        type="button"
        aria-expanded={open}
        aria-controls={detailsId}
        onClick={() => setOpen((v) => !v)}
        className="grid w-full grid-cols-[1rem_3.5rem_minmax(0,1fr)] items-center gap-x-3 gap-y-1 px-4 py-2 text-left text-sm hover:bg-zinc-50 focus-visible:-outline-offset-2 sm:grid-cols-[1rem_3.5rem_6.5rem_minmax(8rem,10rem)_1fr] dark:hover:bg-zinc-800/40"
      >
        <ChevronIcon width={14} height={14} className={`text-zinc-400 transition-transform ${open ? "rotate-90" : ""}`} />
        <span className="font-mono text-xs text-zinc-500 tabular-nums dark:text-zinc-400">#{event.id}</span>
        <time dateTime={event.ts} title={event.ts} className="hidden font-mono text-xs text-zinc-500 tabular-nums sm:block dark:text-zinc-400">
          {formatTime(event.ts)}
        </time>
        <span className={`justify-self-start truncate rounded-md px-1.5 py-0.5 font-mono text-xs ring-1 ring-inset ${typeClass(event.type)}`}>{event.type}</span>
        <span className="col-span-2 col-start-2 flex min-w-0 items-center gap-2 sm:col-span-1 sm:col-start-auto">
          {scopeBadges(event.scope).map(([label, id]) => (
            <span key={label} data-testid="event-scope" data-id={id} title={`${label} ${id}`} className="shrink-0 rounded bg-zinc-100 px-1.5 py-0.5 text-xs text-zinc-600 dark:bg-zinc-800 dark:text-zinc-300">
              {label} <span className="font-mono">{scopeName(label, id, names)}</span>
            </span>
          ))}
          <span data-testid="event-summary" className="truncate text-zinc-800 dark:text-zinc-200">
            {summarize(event)}
          </span>
        </span>
      </button>
      {open && (
        <pre id={detailsId} className="mx-4 mb-3 overflow-x-auto rounded-md bg-zinc-50 p-3 font-mono text-xs leading-relaxed text-zinc-800 ring-1 ring-zinc-200 ring-inset dark:bg-zinc-900 dark:text-zinc-200 dark:ring-zinc-800">
          {JSON.stringify(event, null, 2)}
        </pre>
      )}
    </li>
  );
});
