import { describe, expect, it } from "vitest";
import type { BusEvent } from "../../../shared/events";
import { mergeEvents } from "./event-buffer";

const ev = (id: number): BusEvent => ({ id, ts: new Date(0).toISOString(), type: "system.noted", scope: {}, payload: { message: `m${id}` } });
const ids = (events: readonly BusEvent[]) => events.map((e) => e.id);

describe("mergeEvents", () => {
  it("appends newer events in order", () => {
    expect(ids(mergeEvents([ev(1), ev(2)], [ev(3), ev(4)]))).toEqual([1, 2, 3, 4]);
  });

  it("drops events it already has (a replay after a reconnect)", () => {
    const current = [ev(1), ev(2), ev(3)];
    expect(mergeEvents(current, [ev(2), ev(3)])).toBe(current);
    expect(ids(mergeEvents(current, [ev(3), ev(4), ev(2), ev(5)]))).toEqual([1, 2, 3, 4, 5]);
  });

  it("sorts out-of-order arrivals and duplicates inside one batch", () => {
    expect(ids(mergeEvents([], [ev(5), ev(3), ev(5), ev(4)]))).toEqual([3, 4, 5]);
  });

  it("keeps only the newest `cap` events", () => {
    const many = Array.from({ length: 12 }, (_, i) => ev(i + 1));
    expect(ids(mergeEvents([], many, 10))).toEqual([3, 4, 5, 6, 7, 8, 9, 10, 11, 12]);
    expect(ids(mergeEvents(many.slice(2), [ev(1)], 10))).toEqual([3, 4, 5, 6, 7, 8, 9, 10, 11, 12]);
  });
});
