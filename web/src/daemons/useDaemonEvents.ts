import { useState } from "react";
import type { BusEvent } from "../../../shared/events";
import { mergeEvents } from "../lib/event-buffer";
import { useTrackedSubscription, type TrackedStream } from "../live/useTrackedSubscription";
import { trpc } from "../trpc";

export type DaemonEventsState = TrackedStream & {
  /** Sorted by id, each id once. */
  events: readonly BusEvent[];
};

/**
 * One daemon's lifecycle events (`daemons.onEvents`): every stored one, then live ones, rendered
 * in batches. useTrackedSubscription resumes after the last id received and drops repeats, and
 * the buffer drops ids it already holds, so a reconnect or a server restart never shows an event
 * twice.
 */
export function useDaemonEvents(daemonId: string): DaemonEventsState {
  const [events, setEvents] = useState<readonly BusEvent[]>([]);
  const stream = useTrackedSubscription(trpc.daemons.onEvents, { daemonId }, (batches) => setEvents((prev) => mergeEvents(prev, batches.flat())));
  return { ...stream, events };
}
