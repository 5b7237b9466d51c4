import { useEffect, useRef } from "react";
import type { BusEvent } from "../../../shared/events";
import { useLiveEvents } from "../live/useLiveEvents";

/** Run events that change what a runs listing shows (a run appears, ends, waits or resumes). */
const LISTING_EVENTS = new Set<BusEvent["type"]>(["run.started", "run.completed", "run.request_opened", "run.request_answered"]);

/**
 * Calls `refresh` when the app's live stream brings a run event that changes a listing; at most
 * once per `throttleMs` (a burst of runs is one refetch).
 */
export function useRunsLiveRefresh(refresh: () => void, throttleMs = 400): void {
  const { events } = useLiveEvents();
  const seen = useRef<number | null>(null);
  const timer = useRef<number | null>(null);
  const latest = useRef(refresh);
  latest.current = refresh;

  useEffect(() => {
    const newest = events.at(-1)?.id ?? 0;
    const from = seen.current;
    seen.current = newest;
    if (from === null) return;
    const relevant = events.some((e) => e.id > from && LISTING_EVENTS.has(e.type));
    if (!relevant || timer.current !== null) return;
    timer.current = window.setTimeout(() => {
      timer.current = null;
      latest.current();
    }, throttleMs);
  }, [events, throttleMs]);

  useEffect(() => () => void (timer.current !== null && window.clearTimeout(timer.current)), []);
}
