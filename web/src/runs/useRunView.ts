import { useCallback, useEffect, useRef, useState } from "react";
import type { BusEvent } from "../../../shared/events";
import type { SubscriptionStatus } from "../live/connection";
import { trpc } from "../trpc";
import { applyEvents, emptyRunView, type RunView } from "./run-model";

/** Events arriving together (a replay page, a burst of deltas) are folded in one render. */
const FLUSH_MS = 50;

export type RunViewState = {
  view: RunView;
  /** The first batch is in (the stored timeline starts replaying). */
  received: boolean;
  status: SubscriptionStatus;
  error?: string;
};

/**
 * One run's events from the start (`runs.onEvents`: the stored timeline, then live), folded into
 * a RunView. A reconnect resumes after the last tracked id, and the fold drops any event id it
 * has already applied, so a reload mid-run shows everything once.
 */
export function useRunView(runId: string): RunViewState {
  const [view, setView] = useState<RunView>(emptyRunView);
  const [received, setReceived] = useState(false);
  const [input, setInput] = useState<{ runId: string; lastEventId?: string }>({ runId });
  const pending = useRef<BusEvent[]>([]);
  const timer = useRef<number | null>(null);
  const lastId = useRef(0);

  const flush = useCallback(() => {
    timer.current = null;
    const batch = pending.current;
    pending.current = [];
    setView((v) => applyEvents(v, batch));
    setReceived(true);
  }, []);

  const sub = trpc.runs.onEvents.useSubscription(input, {
    onData: (message) => {
      for (const event of message.data) {
        pending.current.push(event);
        if (event.id > lastId.current) lastId.current = event.id;
      }
      timer.current ??= window.setTimeout(flush, FLUSH_MS);
    },
  });

  useEffect(() => () => void (timer.current !== null && window.clearTimeout(timer.current)), []);
  useRecover(sub.status, sub.reset, runId, lastId, input, setInput);
  return { view, received, status: sub.status, ...(sub.error ? { error: sub.error.message } : {}) };
}

/** When the subscription gives up (an HTTP error), start it again with backoff, after the last event we have. */
function useRecover(
  status: SubscriptionStatus,
  reset: () => void,
  runId: string,
  lastId: { current: number },
  input: { lastEventId?: string },
  setInput: (v: { runId: string; lastEventId?: string }) => void,
) {
  const attempts = useRef(0);
  useEffect(() => {
    if (status === "pending") attempts.current = 0;
    if (status !== "error") return;
    const delay = Math.min(1000 * 2 ** attempts.current, 15_000);
    attempts.current += 1;
    const t = window.setTimeout(() => {
      const from = lastId.current;
      if (from > Number(input.lastEventId ?? 0)) setInput({ runId, lastEventId: String(from) });
      else reset();
    }, delay);
    return () => window.clearTimeout(t);
  }, [status, reset, runId, lastId, input, setInput]);
}
