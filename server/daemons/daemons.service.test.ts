import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import type { DomainError } from "../errors";
import { daemonHarness, waitFor, type DaemonHarness } from "../testing/daemons-harness";

let h: DaemonHarness;
afterEach(async () => {
  await h.close();
});

async function caught(p: Promise<unknown>): Promise<DomainError> {
  try {
    await p;
  } catch (err) {
    return err as DomainError;
  }
  throw new Error("expected a rejection");
}

const TASK = "Watch for triggers.";
const messageCalls = (calls: string[]) => calls.filter((c) => c !== TASK);

describe("DaemonsService: queue", () => {
  it("delivers 1,000 triggers FIFO, one per wake, across a stop and resume in the middle", async () => {
    h = daemonHarness();
    const d = await h.service.spawn({ task: TASK, eventQueueCapacity: 2000 });
    expect(d.id).toMatch(/^daemon_[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    const first = await Promise.all(Array.from({ length: 500 }, (_, i) => h.service.trigger(d.id, `m${i}`)));
    expect(first.map((r) => r.seq)).toEqual(Array.from({ length: 500 }, (_, i) => i));
    await waitFor(() => messageCalls(h.calls).length >= 100, 20_000, "100 deliveries");
    const stopped = await h.service.stop(d.id);
    expect(stopped.status).toBe("stopped");
    expect(stopped.pending_event_count).toBeGreaterThan(0);
    await h.service.resume({ path: stopped.persist_path });
    const second = await Promise.all(Array.from({ length: 500 }, (_, i) => h.service.trigger(d.id, `m${500 + i}`)));
    expect(second[0]!.seq).toBe(500);
    await waitFor(() => h.calls.includes("m999"), 60_000, "the last trigger");
    // at-least-once: a re-queued in-flight event may be delivered twice in a row, never out of order
    const seen = messageCalls(h.calls).filter((c, i, all) => c !== all[i - 1]);
    expect(seen).toEqual(Array.from({ length: 1000 }, (_, i) => `m${i}`));
    await waitFor(async () => (await h.service.snapshot(d.id)).queued_event_count === 0, 10_000, "an empty queue");
  }, 90_000);

  it("enforces the capacity, counting the in-flight event, with a typed error", async () => {
    h = daemonHarness();
    const d = await h.service.spawn({ task: TASK, eventQueueCapacity: 3 });
    await waitFor(() => h.calls.length >= 1, 5000, "the first turn");
    await h.service.trigger(d.id, `SLOW ${"x".repeat(600)}`);
    await waitFor(async () => (await h.service.snapshot(d.id)).inflight_event != null, 5000, "an in-flight event");
    await h.service.trigger(d.id, "b");
    const { seq } = await h.service.trigger(d.id, "c");
    // acknowledged means committed
    const row = h.db.$client.prepare("SELECT state, payload FROM daemon_queue WHERE daemon_id = ? AND seq = ?").get(d.id, seq) as { state: string; payload: string };
    expect(row).toEqual({ state: "pending", payload: JSON.stringify("c") });
    const err = await caught(h.service.trigger(d.id, "d"));
    expect(err.code).toBe("DAEMON_QUEUE_FULL");
    expect(err.kind).toBe("TOO_MANY_REQUESTS");
    expect(err.details).toEqual({ daemonId: d.id, capacity: 3 });
    expect(err.message).toBe(`Daemon queue full: daemon '${d.id}' reached its event_queue_capacity of 3`);
  });

  it("re-queues the in-flight event at the FRONT on stop mid-turn; resume delivers it, then the rest", async () => {
    h = daemonHarness();
    const d = await h.service.spawn({ task: TASK });
    await waitFor(() => h.calls.length >= 1, 5000, "the first turn");
    const slow = `SLOW ${"y".repeat(600)}`;
    await h.service.trigger(d.id, slow);
    await h.service.trigger(d.id, "b");
    await h.service.trigger(d.id, { kind: "file_changed", path: "src/lib.rs" });
    await waitFor(async () => (await h.service.snapshot(d.id)).inflight_event?.seq === 0, 5000, "seq 0 in flight");
    const started = Date.now();
    await h.service.stop(d.id);
    expect(Date.now() - started).toBeGreaterThanOrEqual(400);
    const snap = (await h.service.snapshot(d.id)) as { pending_events: Array<{ seq: number }>; inflight_event: unknown; recorded_messages: Array<{ content: unknown }> };
    expect(snap.pending_events.map((e) => e.seq)).toEqual([0, 1, 2]);
    expect(snap.inflight_event).toBeNull();
    // the snapshot is pre-trigger: the half-consumed message is not in it
    expect(JSON.stringify(snap.recorded_messages)).not.toContain("SLOW");
    const stoppedEvents = h.bus.store.readAfter(0, { kind: "daemon", id: d.id }, 1000).filter((e) => e.type === "daemon.stopped");
    expect(stoppedEvents.at(-1)?.payload).toMatchObject({ requeuedSeq: 0 });

    const before = h.calls.length;
    await h.service.resume({ id: d.id });
    await waitFor(() => h.calls.length >= before + 3, 10_000, "three deliveries");
    expect(h.calls.slice(before)).toEqual([slow, "b", JSON.stringify({ kind: "file_changed", path: "src/lib.rs" })]);
  });

  it("refuses triggers for stopped and unknown daemons", async () => {
    h = daemonHarness();
    const d = await h.service.spawn({ task: TASK });
    await h.service.stop(d.id);
    expect((await caught(h.service.trigger(d.id, "x"))).code).toBe("DAEMON_NOT_RUNNING");
    expect((await caught(h.service.trigger("daemon_nope", "x"))).code).toBe("DAEMON_NOT_FOUND");
    // stopping a stopped daemon returns its summary
    expect((await h.service.stop(d.id)).status).toBe("stopped");
  });
});

describe("DaemonsService: wakes and end statuses", () => {
  it("wakes on a change under watchPaths and tells the agent which path changed", async () => {
    h = daemonHarness();
    const watched = join(h.home, "src");
    mkdirSync(watched);
    writeFileSync(join(watched, "a.txt"), "one");
    await h.service.spawn({ task: TASK, watchPaths: [watched] });
    await waitFor(() => h.calls.length >= 1, 5000, "the first turn");
    writeFileSync(join(watched, "b.txt"), "two");
    await waitFor(() => h.calls.some((c) => c.startsWith("[wake: watch]")), 10_000, "a watch wake");
    const wake = h.calls.find((c) => c.startsWith("[wake: watch]"))!;
    expect(wake).toContain(join(watched, "b.txt"));
    expect(wake).not.toContain("a.txt");
  });

  it("wakes on the timer", async () => {
    h = daemonHarness();
    await h.service.spawn({ task: TASK, wakeIntervalMs: 200 });
    await waitFor(() => h.calls.filter((c) => c.startsWith("[wake: timer]")).length >= 2, 5000, "two timer wakes");
  });

  it("ends with watchdog after idleWatchdogAttempts idle ticks", async () => {
    h = daemonHarness();
    const d = await h.service.spawn({ task: TASK, idleWatchdogAttempts: 2 });
    const stopped = () => h.bus.store.readAfter(0, { kind: "daemon", id: d.id }, 1000).find((e) => e.type === "daemon.stopped");
    await waitFor(() => stopped() !== undefined, 5000, "the watchdog");
    expect(await h.service.snapshot(d.id)).toMatchObject({ status: "stopped", loop_status: "watchdog" });
    expect(stopped()?.payload).toMatchObject({ loopStatus: "watchdog" });
  });

  it("ends idle with no wake source, budget_exhausted at maxIterations, done on the marker", async () => {
    h = daemonHarness();
    const idle = await h.service.spawn({ task: TASK, triggers: false });
    const budget = await h.service.spawn({ task: TASK, maxIterations: 2 });
    const done = await h.service.spawn({ task: TASK });
    await h.service.trigger(budget.id, "one");
    await h.service.trigger(done.id, "all good ##DONE##");
    await waitFor(async () => (await Promise.all([idle, budget, done].map((d) => h.service.snapshot(d.id)))).every((s) => s.status !== "running"), 5000, "three ends");
    expect((await h.service.snapshot(idle.id)).loop_status).toBe("idle");
    expect((await h.service.snapshot(budget.id)).loop_status).toBe("budget_exhausted");
    expect((await h.service.snapshot(done.id)).loop_status).toBe("done");
  });
});

describe("DaemonsService: failures", () => {
  it("a failed model call fails the daemon with the error as data and keeps the event queued", async () => {
    h = daemonHarness();
    const d = await h.service.spawn({ task: TASK });
    await h.service.trigger(d.id, "FAIL please");
    await waitFor(async () => (await h.service.snapshot(d.id)).status === "failed", 5000, "the failure");
    const snap = await h.service.snapshot(d.id);
    expect(snap).toMatchObject({ status: "failed", loop_status: "failed", pending_event_count: 1, inflight_event: null });
    expect(snap.error).toMatch(/model refused: FAIL please/);
    expect(snap.pending_events[0]).toMatchObject({ seq: 0, payload: "FAIL please" });
    const failedEvent = () => h.bus.store.readAfter(0, { kind: "daemon", id: d.id }, 1000).find((e) => e.type === "daemon.failed");
    await waitFor(() => failedEvent() !== undefined, 5000, "daemon.failed");
    expect(failedEvent()?.payload).toMatchObject({ code: "DAEMON_FAILED" });
    expect((await caught(h.service.trigger(d.id, "more"))).code).toBe("DAEMON_NOT_RUNNING");
    expect((await h.service.list())[0]).toMatchObject({ id: d.id, status: "failed" });
  });
});

describe("DaemonsService: durability", () => {
  it("group-commits concurrent triggers: one transaction per event-loop turn", async () => {
    h = daemonHarness();
    const d = await h.service.spawn({ task: TASK, triggers: true, eventQueueCapacity: 500 });
    let transactions = 0;
    const sqlite = h.db.$client;
    const original = sqlite.transaction.bind(sqlite);
    sqlite.transaction = ((fn: (...args: never[]) => unknown) => {
      const tx = original(fn);
      return Object.assign((...args: never[]) => {
        transactions++;
        return tx(...args);
      }, tx);
    }) as typeof sqlite.transaction;
    try {
      await Promise.all(Array.from({ length: 200 }, (_, i) => h.service.trigger(d.id, i)));
    } finally {
      sqlite.transaction = original;
    }
    expect(transactions).toBe(1);
    const count = h.db.$client.prepare("SELECT COUNT(*) AS n FROM daemon_queue WHERE daemon_id = ?").get(d.id) as { n: number };
    expect(count.n).toBeGreaterThan(0);
  });
});
