import { memo, useState, type ReactNode } from "react";
import type { BusEvent } from "../../../shared/events";
import { useStickToBottom } from "../hooks/useStickToBottom";
import { formatTime } from "../lib/format";
import type { DaemonEventsState } from "./useDaemonEvents";

/** How many turns the transcript shows (the newest). */
const LAST_TURNS = 50;

const REASONS: Record<string, string> = { spawn: "task", message: "trigger", resume: "replayed", watch: "file change", timer: "timer" };

/** The daemon's last turns: what it answered to each wake (daemon.turn_completed). */
export function DaemonTurns({ stream }: { stream: DaemonEventsState }) {
  const turns = stream.events.filter((e): e is BusEvent<"daemon.turn_completed"> => e.type === "daemon.turn_completed").slice(-LAST_TURNS);
  const { box, content, onScroll } = useStickToBottom<HTMLDivElement, HTMLOListElement>();
  return (
    <Panel title="Turns" id="daemon-turns-title" count={turns.length}>
      <div ref={box} onScroll={onScroll} className="max-h-[28rem] overflow-y-auto">
        <ol ref={content} data-testid="daemon-turns" className="divide-y divide-zinc-100 dark:divide-zinc-800/70">
          {turns.map((e) => (
            <TurnItem key={e.id} event={e} />
          ))}
          {turns.length === 0 && <Placeholder received={stream.received || stream.status === "pending"}>No turns yet: the first one answers the task.</Placeholder>}
        </ol>
      </div>
    </Panel>
  );
}

/** Answers longer than this are folded to a few lines until opened. */
const FOLD_AT = 280;

const TurnItem = memo(function TurnItem({ event: e }: { event: BusEvent<"daemon.turn_completed"> }) {
  const [open, setOpen] = useState(false);
  const long = e.payload.text.length > FOLD_AT;
  return (
    <li data-testid="daemon-turn" data-event-id={e.id} data-seq={e.payload.seq} className="px-4 py-3">
      <div className="flex flex-wrap items-center gap-2 text-xs text-zinc-500 dark:text-zinc-400">
        <span className="font-medium text-zinc-700 dark:text-zinc-300">Turn {e.payload.iteration}</span>
        <span className="rounded bg-zinc-100 px-1.5 py-0.5 dark:bg-zinc-800">
          {REASONS[e.payload.reason] ?? e.payload.reason}
          {e.payload.seq !== undefined ? ` #${e.payload.seq}` : ""}
        </span>
        <time dateTime={e.ts} className="ml-auto font-mono tabular-nums">
          {formatTime(e.ts)}
        </time>
      </div>
      <p data-testid="daemon-turn-text" className={`mt-1.5 text-sm break-words whitespace-pre-wrap text-zinc-800 dark:text-zinc-200 ${long && !open ? "line-clamp-3" : ""}`}>
        {e.payload.text || <span className="text-zinc-400 italic dark:text-zinc-500">(empty answer)</span>}
      </p>
      {long && (
        <button type="button" aria-expanded={open} onClick={() => setOpen((v) => !v)} className="mt-1 text-xs font-medium text-indigo-600 hover:underline dark:text-indigo-400">
          {open ? "Show less" : `Show all ${e.payload.text.length.toLocaleString("en")} characters`}
        </button>
      )}
    </li>
  );
});

const TYPE_STYLES: Record<string, string> = {
  "daemon.failed": "bg-red-50 text-red-700 ring-red-600/20 dark:bg-red-400/10 dark:text-red-300 dark:ring-red-400/20",
  "daemon.stopped": "bg-zinc-100 text-zinc-700 ring-zinc-500/20 dark:bg-zinc-400/10 dark:text-zinc-300 dark:ring-zinc-400/20",
  "daemon.turn_completed": "bg-emerald-50 text-emerald-700 ring-emerald-600/20 dark:bg-emerald-400/10 dark:text-emerald-300 dark:ring-emerald-400/20",
};
const DEFAULT_STYLE = "bg-amber-50 text-amber-800 ring-amber-600/20 dark:bg-amber-400/10 dark:text-amber-300 dark:ring-amber-400/20";

/** Every lifecycle event of the daemon, oldest first, following the newest. */
export function DaemonLifecycle({ stream }: { stream: DaemonEventsState }) {
  const { box, content, onScroll } = useStickToBottom<HTMLDivElement, HTMLOListElement>();
  const connection = stream.status === "pending" ? "live" : stream.status === "error" ? "offline" : "connecting";
  return (
    <Panel
      title="Lifecycle"
      id="daemon-lifecycle-title"
      count={stream.events.length}
      extra={
        <span data-testid="daemon-events-connection" data-state={connection} title={stream.error} className="text-xs text-zinc-500 dark:text-zinc-400">
          {connection === "live" ? "live" : connection === "offline" ? "reconnecting…" : "connecting…"}
        </span>
      }
    >
      <div ref={box} onScroll={onScroll} className="max-h-80 overflow-y-auto">
        <ol ref={content} data-testid="daemon-events" className="divide-y divide-zinc-100 font-mono text-xs dark:divide-zinc-800/70">
          {stream.events.map((e) => (
            <LifecycleRow key={e.id} event={e} />
          ))}
          {stream.events.length === 0 && <Placeholder received={stream.received || stream.status === "pending"}>No events yet.</Placeholder>}
        </ol>
      </div>
    </Panel>
  );
}

const LifecycleRow = memo(function LifecycleRow({ event }: { event: BusEvent }) {
  const summary = (event.payload as { summary?: string }).summary ?? "";
  return (
    <li data-testid="daemon-event" data-event-id={event.id} data-type={event.type} className="grid grid-cols-[3.5rem_6.5rem_8.5rem_1fr] items-center gap-3 px-4 py-1.5">
      <span className="text-zinc-500 tabular-nums dark:text-zinc-400">#{event.id}</span>
      <time dateTime={event.ts} className="text-zinc-500 tabular-nums dark:text-zinc-400">{formatTime(event.ts)}</time>
      <span className={`justify-self-start truncate rounded-md px-1.5 py-0.5 ring-1 ring-inset ${TYPE_STYLES[event.type] ?? DEFAULT_STYLE}`}>{event.type.replace(/^daemon\./, "")}</span>
      <span className="truncate font-sans text-sm text-zinc-800 dark:text-zinc-200" title={summary}>{summary}</span>
    </li>
  );
});

function Panel({ title, id, count, extra, children }: { title: string; id: string; count: number; extra?: ReactNode; children: ReactNode }) {
  return (
    <section aria-labelledby={id} className="overflow-hidden rounded-xl border border-zinc-200 bg-white shadow-sm dark:border-zinc-800 dark:bg-zinc-900/60">
      <div className="flex items-center gap-2 border-b border-zinc-200 px-4 py-3 dark:border-zinc-800">
        <h2 id={id} className="text-sm font-semibold">{title}</h2>
        <span className="text-xs text-zinc-500 tabular-nums dark:text-zinc-400">{count}</span>
        <span className="ml-auto">{extra}</span>
      </div>
      {children}
    </section>
  );
}

function Placeholder({ received, children }: { received: boolean; children: ReactNode }) {
  return <li className="px-4 py-6 text-center font-sans text-sm text-zinc-500 dark:text-zinc-400">{received ? children : "Loading…"}</li>;
}
