import { connectionLabel, type ConnectionState } from "../live/connection";
import { useLiveEvents } from "../live/useLiveEvents";

const DOT: Record<ConnectionState, string> = {
  live: "bg-emerald-500",
  reconnecting: "bg-amber-500 animate-pulse",
  offline: "bg-red-500",
};

const HINT: Record<ConnectionState, string> = {
  live: "Receiving events as they happen.",
  reconnecting: "The live stream dropped; reconnecting and catching up on missed events.",
  offline: "Cannot reach the Switchyard server. Is `yard start` running? Retrying in the background.",
};

/** Live / Reconnecting / Offline, from the state of the app's event subscription. */
export function ConnectionIndicator() {
  const { connection } = useLiveEvents();
  const title = connection.error ? `${HINT[connection.state]} (${connection.error})` : HINT[connection.state];
  return (
    <div
      data-testid="connection-state"
      data-state={connection.state}
      role="status"
      aria-live="polite"
      title={title}
      className="inline-flex items-center gap-2 rounded-full border border-zinc-200 bg-white px-2.5 py-1 text-xs font-medium text-zinc-700 dark:border-zinc-800 dark:bg-zinc-900 dark:text-zinc-300"
    >
      <span className="relative flex size-2">
        {connection.state === "live" && <span className="absolute inline-flex size-full animate-ping rounded-full bg-emerald-400 opacity-60 motion-reduce:hidden" />}
        <span className={`relative inline-flex size-2 rounded-full ${DOT[connection.state]}`} />
      </span>
      {connectionLabel(connection)}
    </div>
  );
}
