import { eq } from "drizzle-orm";
import { afterAll, describe, expect, it } from "vitest";
import type { BusEvent } from "../../shared/events";
import { EventBus } from "../events/bus";
import { createLogger } from "../log";
import { addAgent, addOutput, addRun, buildWorld, DAY, eventIdsOf, noteAt, tableCounts } from "../testing/retention-world";
import { STORE_KINDS, testStores } from "../testing/stores";
import { prune } from "./retention";
import { RetentionPruner } from "./retention-pruner";
import { first, type Store } from "./store";

/**
 * Retention on SQLite and PostgreSQL: what goes (old ended runs whole, old events of ended or
 * deleted agents, old daemon and server events, ended agents' output whole) and what never does
 * (a live run, agent or open question, the newest event, the daemon queue); a dry run counts the
 * same and removes nothing; subscribers resume across a prune.
 */
const stores = testStores();
afterAll(() => stores.close());

async function world(kind: (typeof STORE_KINDS)[number]) {
  const store = await stores.fresh(kind);
  const bus = await new EventBus(store.events).open();
  const expected = await buildWorld(store, bus);
  return { store, bus, expected };
}

const runRow = async (store: Store, id: string) => first(store.read.select({ id: store.t.runs.id }).from(store.t.runs).where(eq(store.t.runs.id, id)));
const chunksOf = async (store: Store, agentId: string) =>
  (await store.read.select({ id: store.t.agentLogChunks.id }).from(store.t.agentLogChunks).where(eq(store.t.agentLogChunks.agentId, agentId))).length;

describe.each(STORE_KINDS)("retention on %s", (kind) => {
  it("removes an old ended run whole (row and timeline) and keeps a running one, and one that straddles the cutoff, whole", async () => {
    const { store, bus, expected } = await world(kind);
    const before = { live: await eventIdsOf(store, { runId: "run-live" }), straddling: await eventIdsOf(store, { runId: "run-straddling" }) };
    const report = await prune(store, { olderThanDays: 30, batch: 3 });
    expect(report).toMatchObject({ dryRun: false, complete: true, runs: expected.removedRuns, events: expected.removedEvents });
    expect(await eventIdsOf(store, { runId: "run-old" })).toEqual([]);
    expect(await runRow(store, "run-old")).toBeUndefined();
    expect(await eventIdsOf(store, { runId: "run-live" })).toEqual(before.live);
    expect(await runRow(store, "run-live")).toBeDefined();
    expect(await eventIdsOf(store, { runId: "run-straddling" })).toEqual(before.straddling);
    expect(before.straddling).toHaveLength(2);
    // a second pass finds nothing more
    expect(await prune(store, { olderThanDays: 30 })).toMatchObject({ events: 0, runs: 0, output: { chunks: 0 } });
    bus.close();
  });

  it("keeps what live agents, open questions and daemons need; removes ended and deleted agents' events and output whole", async () => {
    const { store, bus, expected } = await world(kind);
    const queue = (await tableCounts(store)).daemonQueue;
    const report = await prune(store, { olderThanDays: 30 });
    expect(report.output).toEqual(expected.removedOutput);
    // a running agent and one waiting for a human keep their events and output
    for (const agentId of ["agent-live", "agent-waiting"]) {
      expect(await eventIdsOf(store, { agentId })).toHaveLength(1);
      expect(await chunksOf(store, agentId)).toBe(3);
    }
    // an idle agent keeps only the pending question asked of it
    expect(await eventIdsOf(store, { conversationId: "conv-open" })).toHaveLength(1);
    expect(await eventIdsOf(store, { conversationId: "conv-done" })).toEqual([]);
    expect(await eventIdsOf(store, { agentId: "agent-idle" })).toHaveLength(1);
    expect(await chunksOf(store, "agent-idle")).toBe(0);
    expect(await chunksOf(store, "agent-deleted")).toBe(0);
    expect(await eventIdsOf(store, { agentId: "agent-deleted" })).toEqual([]);
    // the deleted agent's provider row went with its output; the idle agent's stays (it may be resumed)
    const logs = (await store.read.select({ agentId: store.t.agentLogs.agentId }).from(store.t.agentLogs)).map((r) => r.agentId).sort();
    expect(logs).toEqual(["agent-idle", "agent-live", "agent-waiting"]);
    // a daemon that still exists keeps what is newer than the cutoff, and all of its queue
    expect(await eventIdsOf(store, { daemonId: "daemon-1" })).toHaveLength(1);
    expect((await tableCounts(store)).daemonQueue).toBe(queue);
    bus.close();
  });

  it("a dry run removes nothing and reports what the real prune then removes", async () => {
    const { store, bus, expected } = await world(kind);
    const before = await tableCounts(store);
    const dry = await prune(store, { olderThanDays: 30, dryRun: true });
    expect(await tableCounts(store)).toEqual(before);
    expect(dry).toMatchObject({ dryRun: true, events: expected.removedEvents, runs: expected.removedRuns, output: expected.removedOutput });
    const real = await prune(store, { olderThanDays: 30 });
    expect({ ...real, dryRun: true }).toEqual(dry);
    const after = await tableCounts(store);
    expect(before.events - after.events).toBe(real.events);
    expect(before.chunks - after.chunks).toBe(real.output.chunks);
    expect(before.runs - after.runs).toBe(real.runs);
    bus.close();
  });

  it("keeps the newest event, even when everything is old, and a run holding it whole; ids go on after it, also after a restart", async () => {
    const store = await stores.fresh(kind);
    const bus = await new EventBus(store.events).open();
    const old = Date.now() - 40 * DAY;
    await addRun(store, "run-last", "completed", old);
    for (let i = 0; i < 5; i++) await noteAt(bus, old, `note ${i}`);
    for (let i = 0; i < 3; i++) await noteAt(bus, old, `run ${i}`, { runId: "run-last" });
    const newest = await store.events.maxId();
    expect(await prune(store, { olderThanDays: 30 })).toMatchObject({ events: 5, runs: 0, newestEventId: newest });
    expect(await eventIdsOf(store, { runId: "run-last" })).toHaveLength(3);
    // once a newer event exists, the run goes whole; the newer one stays
    const next = await noteAt(bus, old, "newer");
    expect(next).toBe(newest + 1);
    expect(await prune(store, { olderThanDays: 30 })).toMatchObject({ events: 3, runs: 1 });
    expect(await eventIdsOf(store)).toEqual([next]);
    bus.close();
    const again = await stores.again(store);
    const bus2 = await new EventBus(again.events).open();
    expect((await bus2.publish("system.noted", { message: "after a restart" })).id).toBe(next + 1);
    bus2.close();
  });

  it("keeps the newest N event ids (keepEvents), never half a run", async () => {
    const store = await stores.fresh(kind);
    const bus = await new EventBus(store.events).open();
    const now = Date.now();
    await addRun(store, "run-across", "completed", now);
    for (let i = 0; i < 10; i++) await noteAt(bus, now, `note ${i}`); // ids 1..10
    for (let i = 0; i < 4; i++) await noteAt(bus, now, `run ${i}`, { runId: "run-across" }); // 11..14
    for (let i = 0; i < 6; i++) await noteAt(bus, now, `later ${i}`); // 15..20
    // keep the newest 8 (13..20): 1..10 go; the run (11..14) straddles the bound and stays whole
    const report = await prune(store, { keepEvents: 8 });
    expect(report).toMatchObject({ events: 10, runs: 0 });
    expect(await eventIdsOf(store)).toEqual([11, 12, 13, 14, 15, 16, 17, 18, 19, 20]);
    // keep 6: the run is then wholly past the bound, and goes
    expect(await prune(store, { keepEvents: 6 })).toMatchObject({ events: 4, runs: 1 });
    expect(await eventIdsOf(store)).toEqual([15, 16, 17, 18, 19, 20]);
    bus.close();
  });

  it("a byte budget for agent output removes the oldest ended agents' output whole first, never a live agent's", async () => {
    const store = await stores.fresh(kind);
    const now = Date.now();
    await addAgent(store, "live", "running", now);
    await addAgent(store, "first", "stopped", now);
    await addAgent(store, "second", "idle", now);
    await addOutput(store, "live", 5, now); // oldest chunks, 50 bytes
    await addOutput(store, "first", 5, now); // 50 bytes
    await addOutput(store, "second", 5, now); // newest, 50 bytes
    // the newest 50 bytes are "second"'s: "first" is wholly past the budget and goes; "live", older still, stays
    expect((await prune(store, { maxOutputBytes: 50, dryRun: true })).output).toEqual({ agents: 1, chunks: 5, bytes: 50 });
    expect((await prune(store, { maxOutputBytes: 50, batch: 2 })).output).toEqual({ agents: 1, chunks: 5, bytes: 50 });
    expect([await chunksOf(store, "live"), await chunksOf(store, "first"), await chunksOf(store, "second")]).toEqual([5, 0, 5]);
    // an agent whose output straddles the budget keeps all of it
    expect((await prune(store, { maxOutputBytes: 30 })).output).toEqual({ agents: 0, chunks: 0, bytes: 0 });
    expect(await chunksOf(store, "second")).toBe(5);
    expect(await chunksOf(store, "live")).toBe(5);
  });

  it("a subscriber resuming with lastEventId after a prune gets every later event, in order, and nothing twice", async () => {
    const { store, bus } = await world(kind);
    const cursor = (await eventIdsOf(store, { runId: "run-old" })).at(-1)!;
    const later = (await eventIdsOf(store)).filter((id) => id > cursor);
    const report = await prune(store, { olderThanDays: 30 });
    expect(report.events).toBeGreaterThan(0);
    const kept = (await eventIdsOf(store)).filter((id) => id > cursor);
    // after the prune: what is left after the cursor, then what is published next
    const published = [await noteAt(bus, Date.now(), "after the prune 1"), await noteAt(bus, Date.now(), "after the prune 2")];
    expect(published[0]).toBe(Math.max(...later) + 1);
    const seen: BusEvent[] = [];
    const abort = new AbortController();
    for await (const e of bus.subscribe({ afterId: cursor, signal: abort.signal })) {
      seen.push(e);
      if (e.id === published[1]) break;
    }
    abort.abort();
    expect(seen.map((e) => e.id)).toEqual([...kept, ...published]);
    // the events that were old but protected are among them: a live run's, a live agent's
    expect(seen.some((e) => e.scope.runId === "run-live")).toBe(true);
    expect(seen.some((e) => e.scope.agentId === "agent-live")).toBe(true);
    bus.close();
  });

  it("a pass stopped half-way leaves no run half-listed: the next pass finishes its timeline", async () => {
    const store = await stores.fresh(kind);
    const bus = await new EventBus(store.events).open();
    const old = Date.now() - 40 * DAY;
    await addRun(store, "run-long", "cancelled", old);
    for (let i = 0; i < 12; i++) await noteAt(bus, old, `run ${i}`, { runId: "run-long" });
    await noteAt(bus, Date.now(), "newest");
    const abort = new AbortController();
    const pass = prune(store, { olderThanDays: 30, batch: 4, signal: abort.signal });
    abort.abort();
    const stopped = await pass;
    expect(stopped.complete).toBe(false);
    expect(await runRow(store, "run-long")).toBeUndefined(); // the row went with the first batch
    expect(await eventIdsOf(store, { runId: "run-long" })).toHaveLength(8);
    const rest = await prune(store, { olderThanDays: 30, batch: 4 });
    expect(rest).toMatchObject({ complete: true, runs: 1, events: 8 });
    expect(await eventIdsOf(store, { runId: "run-long" })).toEqual([]);
    bus.close();
  });

  it("the server's pruner logs what it removed, and stops cleanly", async () => {
    const { store, bus, expected } = await world(kind);
    const lines: string[] = [];
    const log = createLogger({ level: "info", redact: (s) => s, stream: { write: (line: string) => lines.push(line) } });
    const pruner = new RetentionPruner({ store, log, limits: { olderThanDays: 30 }, firstDelayMs: 60_000 });
    pruner.start();
    const report = await pruner.runOnce();
    await pruner.stop();
    expect(report).toMatchObject({ events: expected.removedEvents, runs: expected.removedRuns });
    const logged = lines.map((l) => JSON.parse(l) as Record<string, unknown>);
    expect(logged.find((l) => l.msg === "retention: pruned old events and agent output")).toMatchObject({ events: expected.removedEvents, runs: 1, outputChunks: 6, outputBytes: 60 });
    bus.close();
  });
});
