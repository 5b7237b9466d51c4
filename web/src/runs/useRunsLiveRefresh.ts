import type { BusEvent } from "../../../shared/events";
import { useLiveRefresh } from "../live/useLiveRefresh";

/** Run events that change what a runs listing shows (a run appears, ends, waits or resumes). */
const LISTING_EVENTS = new Set<BusEvent["type"]>(["run.started", "run.completed", "run.request_opened", "run.request_answered"]);

export function useRunsLiveRefresh(refresh: () => void, throttleMs = 400): void {
  useLiveRefresh((e) => LISTING_EVENTS.has(e.type), refresh, throttleMs);
}
