import { useEffect, useRef } from "react";
import { useLiveEvents } from "../live/useLiveEvents";

/** Calls `refresh` (throttled) when the live stream brings an agent lifecycle event (not output). */
export function useAgentsLiveRefresh(refresh: () => void, agentId?: string, throttleMs = 250): void {
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
    const relevant = events.some(
      (e) => e.id > from && (e.type.startsWith("agent.") || e.type.startsWith("worktree.")) && e.type !== "agent.output" && (!agentId || e.scope.agentId === agentId),
    );
    if (!relevant || timer.current !== null) return;
    timer.current = window.setTimeout(() => {
      timer.current = null;
      latest.current();
    }, throttleMs);
  }, [events, throttleMs, agentId]);
  useEffect(() => () => void (timer.current !== null && window.clearTimeout(timer.current)), []);
}
