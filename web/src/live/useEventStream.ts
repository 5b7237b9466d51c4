import { skipToken } from "@tanstack/react-query";
import { useEffect, useMemo, useRef, useState } from "react";
import type { BusEvent } from "../../../shared/events";
import { useSystemInfo } from "../hooks/useServerHealth";
import { mergeEvents } from "../lib/event-buffer";
import { trpc } from "../trpc";
import { connectionStateOf, type Connection, type SubscriptionStatus } from "./connection";
import { useOnline } from "./useOnline";
import { useTrackedSubscription } from "./useTrackedSubscription";

/** How many stored events the feed shows on first load, before the live ones. */
export const BACKLOG = 100;

export type EventStream = {
  /** Sorted by id, unique, at most MAX_EVENTS. */
  events: readonly BusEvent[];
  connection: Connection;
  /** False until the first batch (backlog) is in. */
  ready: boolean;
};

/**
 * One subscription to `events.onEvent` for the whole app: starts BACKLOG events before the newest
 * stored one, then stays live, rendered in batches. On a reconnect (also across a server restart)
 * the link resumes from the last tracked id; repeats are dropped by id.
 */
export function useEventStream(): EventStream {
  const info = useSystemInfo();
  const [input, setInput] = useState<{ lastEventId: string } | null>(null);
  if (input === null && info.data) setInput({ lastEventId: String(Math.max(0, info.data.lastEventId - BACKLOG)) });

  const [events, setEvents] = useState<readonly BusEvent[]>([]);
  const sub = useTrackedSubscription(trpc.events.onEvent, input ?? skipToken, (batch) => setEvents((prev) => mergeEvents(prev, batch)));

  const connection = useConnection(sub.status, sub.error);
  useRefreshOnReconnect(connection);
  const ready = sub.received || (sub.status === "pending" && info.data?.lastEventId === 0);
  return useMemo(() => ({ events, connection, ready }), [events, connection, ready]);
}

function useConnection(status: SubscriptionStatus, error: string | undefined): Connection {
  const online = useOnline();
  const [wasLive, setWasLive] = useState(false);
  const [notLiveSince, setNotLiveSince] = useState(() => Date.now());
  const [now, setNow] = useState(() => Date.now());
  const live = status === "pending" && online;

  if (live && !wasLive) setWasLive(true);
  useEffect(() => {
    if (live) return;
    const since = Date.now();
    setNotLiveSince(since);
    setNow(since);
    const tick = window.setInterval(() => setNow(Date.now()), 1000);
    return () => window.clearInterval(tick);
  }, [live]);

  const state = connectionStateOf({ status, online, notLiveForMs: live ? 0 : now - notLiveSince });
  const shownError = live ? undefined : error;
  return useMemo(() => ({ state, wasLive, error: shownError }), [state, wasLive, shownError]);
}

/**
 * Each time the stream goes live, refresh health (the client count just changed); after an
 * outage, refresh every query (the server may have restarted, maybe as a new version).
 */
function useRefreshOnReconnect(connection: Connection) {
  const utils = trpc.useUtils();
  const previous = useRef<Connection["state"] | null>(null);
  const seenLive = useRef(false);
  useEffect(() => {
    const was = previous.current;
    previous.current = connection.state;
    if (connection.state !== "live" || was === "live") return;
    void (seenLive.current ? utils.invalidate() : utils.health.invalidate());
    seenLive.current = true;
  }, [connection.state, utils]);
}
