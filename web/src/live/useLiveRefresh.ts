import { useEffect, useRef } from "react";
import type { BusEvent } from "../../../shared/events";
import { useLiveEvents } from "./useLiveEvents";

/**
 * Calls `refresh` when the app's live stream brings an event that `matches`; at most once per
 * `throttleMs` (a burst of events is one refetch). Events seen before the first render don't count.
 */
export function useLiveRefresh(matches: (e: BusEvent) => boolean, refresh: () => void, throttleMs = 250): void {
  const { events } = useLiveEvents();
  const seen = useRef<number | null>(null);
  const timer = useRef<number | null>(null);
  const latest = useRef({ refresh, matches });
  latest.current = { refresh, matches };

  useEffect(() => {
    const newest = events.at(-1)?.id ?? 0;
    const from = seen.current;
    seen.current = newest;
    if (from === null) return;
    if (!events.some((e) => e.id > from && latest.current.matches(e)) || timer.current !== null) return;
    timer.current = window.setTimeout(() => {
      timer.current = null;
      latest.current.refresh();
    }, throttleMs);
  }, [events, throttleMs]);

  useEffect(() => () => void (timer.current !== null && window.clearTimeout(timer.current)), []);
}
