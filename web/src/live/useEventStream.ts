import { skipToken } from "@tanstack/react-query";
import { useCallback, useEffect, useMemo, useRef, useState } from "react";
import type { BusEvent } from "../../../shared/events";
import { useSystemInfo } from "../hooks/useServerHealth";
import { mergeEvents } from "../lib/event-buffer";
import { trpc } from "../trpc";
import { connectionStateOf, type Connection } from "./connection";
import { useOnline } from "./useOnline";

/** How many stored events the feed shows on first load, before the live ones. */
export const BACKLOG = 100;
/** Events arriving together (a replay) are rendered in one batch. */
const FLUSH_MS = 40;

export type EventStream = {
  /** Sorted by id, unique, at most MAX_EVENTS. */
  events: readonly BusEvent[];
  connection: Connection;
  /** False until the first batch (backlog) is in. */
  ready: boolean;
};

/**
 * One subscription to `events.onEvent` for the whole app: starts BACKLOG events before the newest
 * stored one, then stays live. On a reconnect (also across a server restart) the link resumes
 * from the last tracked id; the buffer drops any event it already has anyway.
 */
export function useEventStream(): EventStream {
  const info = useSystemInfo();
  const [input, setInput] = useState<{ lastEventId: string } | null>(null);
  if (input === null && info.data) setInput({ lastEventId: String(Math.max(0, info.data.lastEventId - BACKLOG)) });

  const { events, ready, push } = useBatchedEvents();
  const newestId = useRef(0);

  const sub = trpc.events.onEvent.useSubscription(input ?? skipToken, {
    onData: (message) => {
      newestId.current = Math.max(newestId.current, message.data.id);
      push(message.data);
    },
  });

  useRecoverFromError(sub, input, newestId, setInput);
  const connection = useConnection(sub.status, sub.error?.message);
  useRefreshOnReconnect(connection);
  const isReady = ready || (sub.status === "pending" && info.data?.lastEventId === 0);
  return useMemo(() => ({ events, connection, ready: isReady }), [events, connection, isReady]);
}

/** Collect events in a ref and render them together every FLUSH_MS. */
function useBatchedEvents() {
  const [events, setEvents] = useState<readonly BusEvent[]>([]);
  const [ready, setReady] = useState(false);
  const pending = useRef<BusEvent[]>([]);
  const timer = useRef<number | null>(null);

  const flush = useCallback(() => {
    timer.current = null;
    const batch = pending.current;
    pending.current = [];
    setEvents((prev) => mergeEvents(prev, batch));
    setReady(true);
  }, []);

  const push = useCallback(
    (event: BusEvent) => {
      pending.current.push(event);
      timer.current ??= window.setTimeout(flush, FLUSH_MS);
    },
    [flush],
  );

  useEffect(() => () => void (timer.current !== null && window.clearTimeout(timer.current)), []);
  return { events, ready, push };
}

type Sub = { status: "idle" | "connecting" | "pending" | "error"; reset: () => void };

/**
 * The link retries by itself while the EventSource reconnects; when the subscription gives up
 * (an HTTP error status, say), start it again with backoff, from the newest event we have.
 */
function useRecoverFromError(sub: Sub, input: { lastEventId: string } | null, newestId: { current: number }, setInput: (v: { lastEventId: string }) => void) {
  const attempts = useRef(0);
  const { status, reset } = sub;
  useEffect(() => {
    if (status === "pending") attempts.current = 0;
    if (status !== "error" || !input) return;
    const delay = Math.min(1000 * 2 ** attempts.current, 15_000);
    attempts.current += 1;
    const t = window.setTimeout(() => {
      const from = newestId.current;
      if (from > Number(input.lastEventId)) setInput({ lastEventId: String(from) });
      else reset();
    }, delay);
    return () => window.clearTimeout(t);
  }, [status, input, reset, newestId, setInput]);
}

function useConnection(status: Sub["status"], error: string | undefined): Connection {
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
