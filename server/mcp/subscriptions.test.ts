import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { Throttle, watchedOf } from "./subscriptions";

describe("watchedOf: which URIs can be subscribed to", () => {
  it("a run's timeline and an agent's log, their page variants too; nothing else", () => {
    expect(watchedOf("switchyard://runs/r-1/timeline")).toEqual({ kind: "run", runId: "r-1" });
    expect(watchedOf("switchyard://runs/r-1/timeline?after=42")).toEqual({ kind: "run", runId: "r-1" });
    expect(watchedOf("switchyard://agents/brave-otter/log")).toEqual({ kind: "agent", agentRef: "brave-otter" });
    expect(watchedOf("switchyard://agents/a%201/log?from=3")).toEqual({ kind: "agent", agentRef: "a 1" });
    for (const uri of ["switchyard://runs/r-1/log", "switchyard://agents/a/timeline", "switchyard://runs//timeline", "switchyard://runs/a/b/timeline", "file:///etc/passwd", "switchyard://agents/%E0%A4%A/log"]) {
      expect(watchedOf(uri), uri).toBeNull();
    }
  });
});

describe("Throttle: at most one call per interval, the first at once, the last never lost", () => {
  beforeEach(() => vi.useFakeTimers());
  afterEach(() => vi.useRealTimers());

  it("coalesces a burst into a leading and a trailing call, then fires at once again after a quiet interval", () => {
    const fired: number[] = [];
    const t = new Throttle(250, () => fired.push(Date.now()));
    const t0 = Date.now();
    t.poke();
    expect(fired).toEqual([t0]);
    for (let i = 0; i < 100; i++) {
      vi.advanceTimersByTime(10); // a delta every 10 ms for a second
      t.poke();
    }
    vi.advanceTimersByTime(300);
    const gaps = fired.slice(1).map((at, i) => at - fired[i]!);
    expect(fired.length).toBeLessThanOrEqual(6);
    expect(fired.length).toBeGreaterThanOrEqual(4);
    for (const gap of gaps) expect(gap).toBeGreaterThanOrEqual(250);
    // the last poke (at t0 + 1000) is covered by a call at or after it
    expect(fired.at(-1)).toBeGreaterThanOrEqual(t0 + 1000);
    vi.advanceTimersByTime(1000);
    const before = fired.length;
    t.poke();
    expect(fired.length).toBe(before + 1);
  });

  it("stop cancels a pending call and ignores later pokes", () => {
    const fired: number[] = [];
    const t = new Throttle(250, () => fired.push(Date.now()));
    t.poke();
    t.poke();
    t.stop();
    vi.advanceTimersByTime(1000);
    t.poke();
    expect(fired).toHaveLength(1);
  });
});
