import type { BusEvent } from "../../../shared/events";

/** At most this many events are kept (and rendered); the oldest go first. */
export const MAX_EVENTS = 1000;

/**
 * Merge incoming events into a list sorted by id: duplicates (a replay after a reconnect, a
 * restart) are dropped by id, and only the newest `cap` are kept. Returns `current` itself when
 * nothing changed, so React can skip a render.
 */
export function mergeEvents(current: readonly BusEvent[], incoming: readonly BusEvent[], cap = MAX_EVENTS): readonly BusEvent[] {
  if (incoming.length === 0) return current;
  const lastId = current.at(-1)?.id ?? 0;
  if (isAscendingAfter(incoming, lastId)) {
    const merged = current.length === 0 ? [...incoming] : [...current, ...incoming];
    return merged.length > cap ? merged.slice(merged.length - cap) : merged;
  }
  const byId = new Map<number, BusEvent>();
  for (const event of current) byId.set(event.id, event);
  let added = false;
  for (const event of incoming) {
    if (byId.has(event.id)) continue;
    byId.set(event.id, event);
    added = true;
  }
  if (!added) return current;
  const merged = [...byId.values()].sort((a, b) => a.id - b.id);
  return merged.length > cap ? merged.slice(merged.length - cap) : merged;
}

function isAscendingAfter(events: readonly BusEvent[], afterId: number): boolean {
  let prev = afterId;
  for (const event of events) {
    if (event.id <= prev) return false;
    prev = event.id;
  }
  return true;
}
