import { useCallback, useEffect, useRef, useState } from "react";
import type { BusEvent } from "../../../shared/events";
import { mergeEvents } from "../lib/event-buffer";
import type { SubscriptionStatus } from "../live/connection";
import { trpc } from "../trpc";

/** Events arriving together (the stored backlog, a burst) render in one batch. */
const FLUSH_MS = 40;

export type DaemonEventsState = {
  /** Sorted by id, each id once. */
  events: readonly BusEvent[];
  /** The first batch is in. */
  received: boolean;
  status: SubscriptionStatus;
  error?: string;
};

type Input = { daemonId: string; lastEventId?: string };

/**
 * One daemon's lifecycle events (`daemons.onEvents`): every stored one, then live ones. A
 * reconnect resumes after the last id received, and ids already held are dropped, so a
 * reconnect or a server restart never shows an event twice.
 */
export function useDaemonEvents(daemonId: string): DaemonEventsState {
  const [events, setEvents] = useState<readonly BusEvent[]>([]);
  const [received, setReceived] = useState(false);
  const [input, setInput] = useState<Input>({ daemonId });
  const pending = useRef<BusEvent[]>([]);
  const timer = useRef<number | null>(null);
  const lastId = useRef(0);

  const flush = useCallback(() => {
    timer.current = null;
    const batch = pending.current;
    pending.current = [];
    setEvents((prev) => mergeEvents(prev, batch));
    setReceived(true);
  }, []);

  const sub = trpc.daemons.onEvents.useSubscription(input, {
    onData: (message) => {
      for (const event of message.data) {
        pending.current.push(event);
        if (event.id > lastId.current) lastId.current = event.id;
      }
      timer.current ??= window.setTimeout(flush, FLUSH_MS);
    },
  });

  useEffect(() => () => void (timer.current !== null && window.clearTimeout(timer.current)), []);
  useRecover(sub.status, sub.reset, daemonId, lastId, input, setInput);
  return { events, received, status: sub.status, ...(sub.error ? { error: sub.error.message } : {}) };
}

/** When the subscription gives up (an HTTP error), start it again with backoff, after the last event held. */
function useRecover(status: SubscriptionStatus, reset: () => void, daemonId: string, lastId: { current: number }, input: Input, setInput: (v: Input) => void) {
  const attempts = useRef(0);
  useEffect(() => {
    if (status === "pending") attempts.current = 0;
    if (status !== "error") return;
    const delay = Math.min(1000 * 2 ** attempts.current, 15_000);
    attempts.current += 1;
    const t = window.setTimeout(() => {
      const from = lastId.current;
      if (from > Number(input.lastEventId ?? 0)) setInput({ daemonId, lastEventId: String(from) });
      else reset();
    }, delay);
    return () => window.clearTimeout(t);
  }, [status, reset, daemonId, lastId, input, setInput]);
}
