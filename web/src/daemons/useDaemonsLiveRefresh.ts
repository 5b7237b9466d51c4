import { useEffect, useRef } from "react";
import { useLiveEvents } from "../live/useLiveEvents";

/** Calls `refresh` (throttled) when a daemon event arrives on the app's live stream. */
export function useDaemonsLiveRefresh(refresh: () => void, daemonId?: string, throttleMs = 250): void {
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
    if (!events.some((e) => e.id > from && e.type.startsWith("daemon.") && (!daemonId || e.scope.daemonId === daemonId)) || timer.current !== null) return;
    timer.current = window.setTimeout(() => {
      timer.current = null;
      latest.current();
    }, throttleMs);
  }, [events, throttleMs, daemonId]);
  useEffect(() => () => void (timer.current !== null && window.clearTimeout(timer.current)), []);
}
