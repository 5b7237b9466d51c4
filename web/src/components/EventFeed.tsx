import { useMemo } from "react";
import { MAX_EVENTS } from "../lib/event-buffer";
import { useLiveEvents } from "../live/useLiveEvents";
import { useScopeNames } from "../live/useScopeNames";
import { EventRow } from "./EventRow";

/** The live event feed, newest first: the stored backlog, then events as they happen. */
export function EventFeed() {
  const { events, ready, connection } = useLiveEvents();
  const newestFirst = useMemo(() => [...events].reverse(), [events]);
  const names = useScopeNames();

  return (
    <section aria-labelledby="event-feed-title" className="overflow-hidden rounded-xl border border-zinc-200 bg-white shadow-sm dark:border-zinc-800 dark:bg-zinc-900/60">
      <div className="flex items-center justify-between gap-4 border-b border-zinc-200 px-4 py-3 dark:border-zinc-800">
        <div>
          <h2 id="event-feed-title" className="text-sm font-semibold">
            Live events
          </h2>
          <p className="text-xs text-zinc-500 dark:text-zinc-400">Newest first. Click an event for its full JSON.</p>
        </div>
        <span data-testid="event-count" className="text-xs text-zinc-500 tabular-nums dark:text-zinc-400">
          {events.length === MAX_EVENTS ? `latest ${MAX_EVENTS}` : `${events.length} ${events.length === 1 ? "event" : "events"}`}
        </span>
      </div>
      {!ready ? (
        <FeedPlaceholder offline={connection.state === "offline"} />
      ) : newestFirst.length === 0 ? (
        <p className="px-4 py-10 text-center text-sm text-zinc-500">No events yet. They appear here the moment something happens.</p>
      ) : (
        <ol data-testid="event-feed" aria-live="off" className="max-h-[70vh] overflow-y-auto">
          {newestFirst.map((event) => (
            <EventRow key={event.id} event={event} names={names} />
          ))}
        </ol>
      )}
    </section>
  );
}

function FeedPlaceholder({ offline }: { offline: boolean }) {
  if (offline) {
    return (
      <p role="alert" className="px-4 py-10 text-center text-sm text-zinc-600 dark:text-zinc-400">
        Cannot reach the server to load events. Check that <code>yard start</code> is running; this page reconnects by itself.
      </p>
    );
  }
  return (
    <div aria-busy="true" aria-label="Loading events" className="space-y-3 px-4 py-4">
      {[0, 1, 2, 3].map((i) => (
        <div key={i} className="h-4 animate-pulse rounded bg-zinc-100 dark:bg-zinc-800" style={{ width: `${90 - i * 12}%` }} />
      ))}
    </div>
  );
}
