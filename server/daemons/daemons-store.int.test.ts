import { existsSync, mkdtempSync, readdirSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, afterEach, describe, expect, it } from "vitest";
import type { PgStore } from "../db/pg/pg-store";
import type { SqliteStore } from "../db/sqlite-store";
import type { Store } from "../db/store";
import { EventBus } from "../events/bus";
import { createLogger } from "../log";
import { STORE_KINDS, testStores, type StoreKind } from "../testing/stores";
import { DaemonsService } from "./daemons.service";
import { createDaemonQueueStorage, type DaemonQueueStorage } from "./queue-store";
import { recordingModel, waitFor } from "../testing/daemons-harness";

/**
 * The daemons' store-facing behaviour on SQLite and on PostgreSQL: the durable trigger queue (group
 * commit in order, the claim of a daemon's next entry as a compare-and-set, recovery, pruning, a
 * restart = a new store on the same database), the SQLite flush never landing inside another
 * transaction, and the service on each store (rows written with their events, FIFO delivery,
 * stop / restart with the in-flight entry replayed first).
 */
const stores = testStores();
afterAll(() => stores.close());

const row = (daemonId: string, seq: number) => ({ daemonId, seq, enqueuedAt: new Date(1_700_000_000_000 + seq).toISOString(), payloadJson: JSON.stringify({ seq, text: `é 🚀 "${seq}"` }) });
const seqs = async (queue: DaemonQueueStorage, daemonId: string) => (await queue.open(daemonId)).map((e) => `${e.seq}:${e.state}`);
const turn = () => new Promise<void>((resolve) => setImmediate(resolve));

/** Raw SQL on the store's own connection (test setup only). */
async function exec(store: Store, sqlite: string, pg: string): Promise<void> {
  if (store.dialect === "sqlite") (store as SqliteStore).db.$client.exec(sqlite);
  else await (store as PgStore).db.$client.unsafe(pg);
}

describe.each(STORE_KINDS)("the daemon queue on %s", (kind: StoreKind) => {
  it("group-commits triggers, resolves them in seq order once committed, and a new store sees the same queue", async () => {
    const store = await stores.fresh(kind);
    const queue = createDaemonQueueStorage(store);
    await queue.flush(); // nothing waits: later inserts still go out
    const resolved: string[] = [];
    const insert = (daemonId: string, seq: number) => queue.insert(row(daemonId, seq)).then(() => void resolved.push(`${daemonId}#${seq}`));
    // three event-loop turns of triggers for two daemons: three batches, committed one after another
    const all: Array<Promise<void>> = [];
    for (let t = 0; t < 3; t++) {
      for (let i = 0; i < 100; i++) all.push(insert(i % 2 === 0 ? "daemon_a" : "daemon_b", t * 50 + Math.floor(i / 2)));
      await turn();
    }
    await Promise.all(all);
    const order = (d: string) => resolved.filter((r) => r.startsWith(d)).map((r) => Number(r.split("#")[1]));
    expect(order("daemon_a")).toEqual(Array.from({ length: 150 }, (_, i) => i));
    expect(order("daemon_b")).toEqual(Array.from({ length: 150 }, (_, i) => i));

    const open = await queue.open("daemon_a");
    expect(open).toHaveLength(150);
    expect(open[7]).toEqual({ seq: 7, enqueuedAt: row("daemon_a", 7).enqueuedAt, payload: { seq: 7, text: `é 🚀 "7"` }, state: "pending" });
    const restarted = createDaemonQueueStorage(await stores.again(store));
    expect(await restarted.open("daemon_b")).toEqual(await queue.open("daemon_b"));
    expect((await restarted.open("daemon_b")).map((e) => e.seq)).toEqual(Array.from({ length: 150 }, (_, i) => i));
  });

  it("a failed batch rejects its triggers and commits none of them; the next batch is unaffected", async () => {
    const store = await stores.fresh(kind);
    const queue = createDaemonQueueStorage(store);
    await queue.insert(row("daemon_a", 0));
    // a duplicate seq in the batch: the whole transaction fails
    const batch = [queue.insert(row("daemon_a", 1)), queue.insert(row("daemon_a", 0))];
    const settled = await Promise.allSettled(batch);
    expect(settled.map((s) => s.status)).toEqual(["rejected", "rejected"]);
    await queue.insert(row("daemon_a", 2));
    expect(await seqs(queue, "daemon_a")).toEqual(["0:pending", "2:pending"]);
  });

  it("claims only the daemon's next entry, once (compare-and-set), also between two stores", async () => {
    const store = await stores.fresh(kind);
    const queue = createDaemonQueueStorage(store);
    const other = createDaemonQueueStorage(await stores.again(store));
    await Promise.all([0, 1, 2].map((seq) => queue.insert(row("daemon_a", seq))));
    expect(await queue.claim("daemon_a", 1)).toBe(false); // 0 is older and pending
    expect(await queue.claim("daemon_a", 0)).toBe(true);
    expect(await queue.claim("daemon_a", 0)).toBe(false); // already in flight
    expect(await other.claim("daemon_a", 1)).toBe(false); // 0 still in flight
    await queue.setState("daemon_a", 0, "done");
    expect(await seqs(other, "daemon_a")).toEqual(["1:pending", "2:pending"]);
    // two servers taking the next entry at once: exactly one gets it
    const both = await Promise.all([queue.claim("daemon_a", 1), other.claim("daemon_a", 1)]);
    expect(both.filter(Boolean)).toHaveLength(1);
    // put back (a stop mid-turn), it is the next one again
    await queue.setState("daemon_a", 1, "pending");
    expect(await other.claim("daemon_a", 1)).toBe(true);
    expect(await seqs(queue, "daemon_a")).toEqual(["1:inflight", "2:pending"]);
    expect(await queue.claim("daemon_b", 0)).toBe(false); // nothing queued there
  });

  it("recover: the meta file's entries made sure of, done ones kept done, in-flight ones pending again", async () => {
    const store = await stores.fresh(kind);
    const queue = createDaemonQueueStorage(store);
    await Promise.all([0, 1, 2].map((seq) => queue.insert(row("daemon_a", seq))));
    await queue.setState("daemon_a", 0, "done");
    expect(await queue.claim("daemon_a", 1)).toBe(true);
    const listed = [0, 1, 3].map((seq) => ({ seq, enqueued_at: `meta ${seq}`, payload: { from: "meta", seq } }));
    const restarted = createDaemonQueueStorage(await stores.again(store));
    const { open, maxSeq } = await restarted.recover("daemon_a", listed);
    expect(open.map((e) => `${e.seq}:${e.state}`)).toEqual(["1:pending", "2:pending", "3:pending"]);
    // the table wins over the meta file
    expect(open[0]!.payload).toEqual({ seq: 1, text: `é 🚀 "1"` });
    expect(open[2]).toMatchObject({ enqueuedAt: "meta 3", payload: { from: "meta", seq: 3 } });
    expect(maxSeq).toBe(3);
    expect((await queue.recover("daemon_b", [])).maxSeq).toBeUndefined();
  });

  it("prunes done entries below a seq only", async () => {
    const store = await stores.fresh(kind);
    const queue = createDaemonQueueStorage(store);
    await Promise.all([0, 1, 2, 3].map((seq) => queue.insert(row("daemon_a", seq))));
    for (const seq of [0, 1, 3]) await queue.setState("daemon_a", seq, "done");
    await queue.pruneDone("daemon_a", 3);
    const { maxSeq } = await queue.recover("daemon_a", []);
    expect(maxSeq).toBe(3); // 3 is done but not below 3: kept
    expect(await seqs(queue, "daemon_a")).toEqual(["2:pending"]);
    const { open } = await queue.recover("daemon_a", [0, 1].map((seq) => ({ seq, enqueued_at: "again", payload: null })));
    expect(open.map((e) => e.seq)).toEqual([0, 1, 2]); // pruned ones a stale meta file lists come back (at-least-once)
  });

  it("commits a trigger outside another transaction that holds the connection: its rollback does not take the trigger", async () => {
    const store = await stores.fresh(kind);
    const queue = createDaemonQueueStorage(store);
    const { daemons } = store.t;
    const events: string[] = [];
    const tx = store
      .tx(async (t) => {
        await t.insert(daemons).values({ id: "daemon_x", name: "x", persistPath: "/x", model: "m", status: "running", createdAt: 1, updatedAt: 1 });
        // hold the transaction open across event-loop turns, as a slow domain write would
        for (let i = 0; i < 5; i++) await turn();
        events.push("tx ends");
        throw new Error("rolled back");
      })
      .catch(() => undefined);
    await turn();
    const inserted = queue.insert(row("daemon_a", 0)).then(() => void events.push("trigger committed"));
    await Promise.all([tx, inserted]);
    if (kind === "sqlite") expect(events).toEqual(["tx ends", "trigger committed"]);
    expect(await seqs(queue, "daemon_a")).toEqual(["0:pending"]);
    expect(await store.read.select().from(daemons)).toEqual([]);
  });
});

// PostgreSQL only: SQLite has one writer, so nothing is ever being taken by another transaction
describe("the daemon queue on postgres", () => {
  it("skips an entry another transaction is taking instead of waiting for it (FOR UPDATE SKIP LOCKED)", async () => {
    const store = await stores.fresh("postgres");
    const queue = createDaemonQueueStorage(store);
    await Promise.all([0, 1].map((seq) => queue.insert(row("daemon_a", seq))));
    const sql = ((await stores.again(store)) as PgStore).db.$client;
    let release!: () => void;
    const released = new Promise<void>((resolve) => (release = resolve));
    let locked!: () => void;
    const isLocked = new Promise<void>((resolve) => (locked = resolve));
    const holder = sql.begin(async (tx) => {
      await tx`SELECT seq FROM daemon_queue WHERE daemon_id = 'daemon_a' AND seq = 0 FOR UPDATE`;
      locked();
      await released;
    });
    await isLocked;
    const started = performance.now();
    expect(await queue.claim("daemon_a", 0)).toBe(false);
    expect(await queue.claim("daemon_a", 1)).toBe(false); // never past the entry being taken
    expect(performance.now() - started).toBeLessThan(2000);
    release();
    await holder;
    expect(await queue.claim("daemon_a", 0)).toBe(true);
  });
});

describe.each(STORE_KINDS)("DaemonsService on %s", (kind: StoreKind) => {
  const homes: string[] = [];
  const services: DaemonsService[] = [];
  const buses: EventBus[] = [];
  afterEach(async () => {
    await Promise.all(services.splice(0).map((s) => s.shutdown()));
    for (const bus of buses.splice(0)) bus.close();
    for (const home of homes.splice(0)) rmSync(home, { recursive: true, force: true });
  });

  const log = createLogger({ level: "silent", redact: (s) => s });
  async function world(store: Store, home?: string) {
    const dir = home ?? mkdtempSync(join(tmpdir(), "switchyard-daemons-store-"));
    if (!home) homes.push(dir);
    const bus = await new EventBus(store.events).open();
    buses.push(bus);
    const calls: string[] = [];
    const model = recordingModel(calls);
    const service = new DaemonsService({ store, bus, log, home: dir, allowedRoots: [], resolveModel: () => ({ model }) });
    services.push(service);
    const events = async (daemonId: string) => (await bus.store.readAfter(0, { kind: "daemon", id: daemonId }, 10_000)).map((e) => e.type);
    return { home: dir, bus, calls, service, events };
  }

  it("spawns with its row and event, acknowledges triggers once committed, delivers them FIFO; recovery replays the in-flight one first", async () => {
    const store = await stores.fresh(kind);
    const w = await world(store);
    const d = await w.service.spawn({ task: "Echo.", name: "echoer", eventQueueCapacity: 500 });
    expect(await w.service.resolveId("echoer")).toBe(d.id);
    await waitFor(() => w.calls.length >= 1, 10_000, "the first turn");
    // a slow turn keeps the daemon busy while the triggers are acknowledged
    const slow = `SLOW ${"s".repeat(600)}`;
    expect(await w.service.trigger("echoer", slow)).toEqual({ seq: 0 });
    // by id: the seq is given at the call (by name it is given once the name is resolved)
    const acks = await Promise.all(Array.from({ length: 40 }, (_, i) => w.service.trigger(d.id, `m${i}`)));
    expect(acks.map((a) => a.seq)).toEqual(Array.from({ length: 40 }, (_, i) => i + 1));
    // acknowledged means committed: another store on the database sees every row
    const elsewhere = createDaemonQueueStorage(await stores.again(store));
    expect((await elsewhere.open(d.id)).map((e) => e.seq)).toEqual(Array.from({ length: 41 }, (_, i) => i));
    await waitFor(() => w.calls.includes("m39"), 20_000, "the last trigger");
    expect(w.calls.slice(1)).toEqual([slow, ...Array.from({ length: 40 }, (_, i) => `m${i}`)]);

    // a slow turn in flight when the server stops: the daemon stays running on disk
    await w.service.trigger(d.id, `SLOW ${"z".repeat(600)}`);
    await w.service.trigger(d.id, "after");
    await waitFor(async () => (await w.service.snapshot(d.id)).inflight_event?.seq === 41, 10_000, "seq 41 in flight");
    await w.service.shutdown();
    services.splice(services.indexOf(w.service), 1);
    w.bus.close();

    const again = await stores.again(store);
    const w2 = await world(again, w.home);
    expect((await w2.service.list()).map((s) => [s.id, s.status, s.queued_event_count])).toEqual([[d.id, "running", 2]]);
    expect(await w2.service.recover()).toEqual({ resumed: [d.id], failed: [] });
    await waitFor(() => w2.calls.includes("after"), 20_000, "the replay");
    expect(w2.calls).toEqual([`SLOW ${"z".repeat(600)}`, "after"]);
    expect((await w2.service.trigger(d.id, "later")).seq).toBe(43);
    await waitFor(async () => (await w2.service.snapshot(d.id)).queued_event_count === 0 && w2.calls.includes("later"), 10_000, "an empty queue");
    expect(await w2.events(d.id)).toEqual(expect.arrayContaining(["daemon.spawned", "daemon.triggered", "daemon.resumed", "daemon.turn_completed"]));

    expect(await w2.service.delete(d.id)).toEqual({ deleted: true });
    expect(await w2.service.list()).toEqual([]);
    const { daemonQueue } = store.t;
    expect(await again.read.select().from(daemonQueue)).toEqual([]);
  }, 90_000);

  it("a spawn whose row the database refuses stores neither the row nor its event (the event's write throws)", async () => {
    const store = await stores.fresh(kind);
    await exec(
      store,
      "CREATE TRIGGER refuse_daemon BEFORE INSERT ON daemons WHEN NEW.name = 'refused' BEGIN SELECT RAISE(ABORT, 'daemon refused'); END;",
      `CREATE FUNCTION refuse_daemon() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN IF NEW.name = 'refused' THEN RAISE EXCEPTION 'daemon refused'; END IF; RETURN NEW; END $$;
       CREATE TRIGGER refuse_daemon BEFORE INSERT ON daemons FOR EACH ROW EXECUTE FUNCTION refuse_daemon();`,
    );
    const w = await world(store);
    const ok = await w.service.spawn({ task: "Echo.", name: "kept" });
    const refused = await w.service.spawn({ task: "Echo.", name: "refused" }).then(
      () => undefined,
      (err: Error) => `${err.message} ${(err.cause as Error | undefined)?.message ?? ""}`,
    );
    expect(refused).toMatch(/daemon refused/);
    expect((await w.service.list()).map((s) => s.name)).toEqual(["kept"]);
    const spawned = (await w.bus.store.readAfter(0, undefined, 10_000)).filter((e) => e.type === "daemon.spawned");
    expect(spawned.map((e) => e.scope.daemonId)).toEqual([ok.id]);
    // its default root is gone with it
    expect(readdirSync(join(w.home, "daemons"))).toEqual([ok.id]);
    expect(existsSync(ok.persist_path)).toBe(true);
    await exec(store, "DROP TRIGGER refuse_daemon;", "DROP TRIGGER refuse_daemon ON daemons; DROP FUNCTION refuse_daemon();");
  });

  it("resume of a stopped daemon updates its row (one row, whichever store), and concurrent resumes start it once", async () => {
    const store = await stores.fresh(kind);
    const w = await world(store);
    const d = await w.service.spawn({ task: "Echo.", name: "twice" });
    await waitFor(() => w.calls.length >= 1, 10_000, "the first turn");
    await w.service.stop(d.id);
    const [a, b] = await Promise.all([w.service.resume({ id: d.id }), w.service.resume({ path: d.persist_path })]);
    expect([a.id, b.id, a.status, b.status]).toEqual([d.id, d.id, "running", "running"]);
    expect((await w.events(d.id)).filter((t) => t === "daemon.resumed")).toHaveLength(1);
    const { daemons } = store.t;
    const rows = await (await stores.again(store)).read.select({ id: daemons.id, status: daemons.status }).from(daemons);
    expect(rows).toEqual([{ id: d.id, status: "running" }]);
  });
});
