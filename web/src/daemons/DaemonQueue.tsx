import { formatRelative } from "../lib/format";
import { payloadPreview } from "./trigger-payload";

/** A queue entry as it comes over the wire (`payload` may be absent when it was undefined). */
type QueuedDaemonEvent = { seq: number; enqueued_at: string; payload?: unknown };

type Props = {
  inflight: QueuedDaemonEvent | null | undefined;
  /** FIFO: the next one to be handed over first. */
  pending: readonly QueuedDaemonEvent[];
  capacity: number;
  now: number;
};

/** The trigger queue: the event in flight, then the pending ones in the order they will be handled. */
export function DaemonQueue({ inflight, pending, capacity, now }: Props) {
  const load = pending.length + (inflight ? 1 : 0);
  const share = capacity > 0 ? Math.min(1, load / capacity) : 0;
  return (
    <section aria-labelledby="daemon-queue-title" className="rounded-xl border border-zinc-200 bg-white shadow-sm dark:border-zinc-800 dark:bg-zinc-900/60">
      <div className="flex items-center justify-between gap-3 border-b border-zinc-200 px-4 py-3 dark:border-zinc-800">
        <h2 id="daemon-queue-title" className="text-sm font-semibold">
          Queue
        </h2>
        <span data-testid="daemon-queue-depth" data-count={load} className="text-xs text-zinc-500 tabular-nums dark:text-zinc-400">
          {load} queued{capacity > 0 ? ` of ${capacity.toLocaleString("en")}` : ""}
        </span>
      </div>
      {capacity > 0 && (
        <div className="h-1 bg-zinc-100 dark:bg-zinc-800" role="meter" aria-label="Queue fill" aria-valuemin={0} aria-valuemax={capacity} aria-valuenow={load}>
          <div className={`h-1 ${share >= 1 ? "bg-red-500" : "bg-indigo-500"}`} style={{ width: `${share * 100}%` }} />
        </div>
      )}
      <ol data-testid="daemon-queue" className="max-h-72 divide-y divide-zinc-100 overflow-y-auto dark:divide-zinc-800/70">
        {inflight && <QueueItem event={inflight} state="inflight" now={now} />}
        {pending.map((e, i) => (
          <QueueItem key={e.seq} event={e} state="pending" position={i + 1} now={now} />
        ))}
        {load === 0 && <li className="px-4 py-6 text-center text-sm text-zinc-500 dark:text-zinc-400">Empty: every trigger has been handled.</li>}
      </ol>
    </section>
  );
}

function QueueItem({ event, state, position, now }: { event: QueuedDaemonEvent; state: "inflight" | "pending"; position?: number; now: number }) {
  return (
    <li data-testid="daemon-queue-item" data-seq={event.seq} data-state={state} className="flex items-center gap-3 px-4 py-2 text-sm">
      <span className="w-10 shrink-0 font-mono text-xs text-zinc-500 tabular-nums dark:text-zinc-400">#{event.seq}</span>
      {state === "inflight" ? (
        <span className="inline-flex shrink-0 items-center gap-1 rounded-full bg-indigo-50 px-2 py-0.5 text-xs font-medium text-indigo-700 ring-1 ring-indigo-600/20 ring-inset dark:bg-indigo-400/10 dark:text-indigo-300 dark:ring-indigo-400/25">
          <span className="size-1.5 animate-pulse rounded-full bg-indigo-500" aria-hidden="true" />
          In flight
        </span>
      ) : (
        <span className="shrink-0 rounded-full bg-zinc-100 px-2 py-0.5 text-xs text-zinc-600 dark:bg-zinc-800 dark:text-zinc-300">Next {position}</span>
      )}
      <span className="min-w-0 flex-1 truncate font-mono text-xs text-zinc-800 dark:text-zinc-200" title={payloadPreview(event.payload, 2000)}>
        {payloadPreview(event.payload)}
      </span>
      <time dateTime={event.enqueued_at} title={new Date(event.enqueued_at).toLocaleString()} className="shrink-0 text-xs text-zinc-500 dark:text-zinc-400">
        {formatRelative(event.enqueued_at, now)}
      </time>
    </li>
  );
}
