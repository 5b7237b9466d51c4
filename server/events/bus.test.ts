import { afterEach, describe, expect, it } from "vitest";
import { join, resolve } from "node:path";
import { closeDb, openDb, type Db } from "../db/client";
import { EventBus } from "./bus";
import { EventStore } from "./event-store";
import type { BusEvent } from "../../shared/events";

const migrationsDir = resolve(import.meta.dirname, "..", "..", "drizzle");
let dbs: Db[] = [];

function makeBus(options: ConstructorParameters<typeof EventBus>[1] = {}, path = ":memory:") {
  const db = openDb({ path, migrationsDir });
  dbs.push(db);
  return new EventBus(new EventStore(db), options);
}

afterEach(() => {
  for (const db of dbs) closeDb(db);
  dbs = [];
});

async function take(it: AsyncGenerator<BusEvent>, n: number): Promise<BusEvent[]> {
  const out: BusEvent[] = [];
  while (out.length < n) {
    const r = await it.next();
    if (r.done) break;
    out.push(r.value);
  }
  return out;
}

describe("EventBus", () => {
  it("assigns monotonic ids and stores an event before it is delivered", async () => {
    const bus = makeBus();
    const seen: Array<{ id: number; storedCount: number }> = [];
    bus.on("system.noted", (e) => seen.push({ id: e.id, storedCount: bus.store.count() }));
    const a = await bus.publish("system.noted", { message: "a" });
    const b = await bus.publish("system.noted", { message: "b" }, { runId: "r1" });
    expect([a.id, b.id]).toEqual([1, 2]);
    expect(seen.map((s) => s.id)).toEqual([1, 2]);
    // each was already in the store when its listener ran
    for (const s of seen) expect(s.storedCount).toBeGreaterThanOrEqual(s.id);
    expect(bus.store.readAfter(0, undefined, 10).map((e) => e.payload)).toEqual([{ message: "a" }, { message: "b" }]);
  });

  it("group-commits a burst in few transactions", async () => {
    const bus = makeBus({ maxBatch: 100 });
    let commits = 0;
    const append = bus.store.append.bind(bus.store);
    bus.store.append = (rows, writes) => {
      commits++;
      return append(rows, writes);
    };
    await Promise.all(Array.from({ length: 1000 }, (_, i) => bus.publish("system.noted", { message: String(i) })));
    expect(bus.store.count()).toBe(1000);
    expect(commits).toBeLessThanOrEqual(11);
  });

  it("rejects a payload that does not match the catalogue", () => {
    const bus = makeBus();
    expect(() => bus.publish("system.noted", { message: 42 } as never)).toThrow(/message/);
  });

  it("replays the backlog after lastEventId, then live events, without gap or duplicate", async () => {
    const bus = makeBus();
    for (let i = 0; i < 50; i++) void bus.publish("system.noted", { message: `old ${i}` });
    bus.flush();
    const ac = new AbortController();
    const sub = bus.subscribe({ afterId: 20, signal: ac.signal });
    const first = await take(sub, 10);
    // live events arrive while the backlog is still being read
    for (let i = 0; i < 50; i++) void bus.publish("system.noted", { message: `new ${i}` });
    const rest = await take(sub, 70);
    ac.abort();
    const ids = [...first, ...rest].map((e) => e.id);
    expect(ids).toEqual(Array.from({ length: 80 }, (_, i) => i + 21));
  });

  it("filters by scope", async () => {
    const bus = makeBus();
    await bus.publish("system.noted", { message: "x" }, { runId: "r1" });
    await bus.publish("system.noted", { message: "y" }, { runId: "r2" });
    const ac = new AbortController();
    const sub = bus.subscribe({ scope: { kind: "run", id: "r2" }, signal: ac.signal });
    const got = await take(sub, 1);
    void bus.publish("system.noted", { message: "z" }, { runId: "r1" });
    void bus.publish("system.noted", { message: "w" }, { runId: "r2" });
    const live = await take(sub, 1);
    ac.abort();
    expect([...got, ...live].map((e) => e.payload)).toEqual([{ message: "y" }, { message: "w" }]);
  });

  it("a slow subscriber that overflows its buffer catches up from the store in order", async () => {
    const bus = makeBus();
    const ac = new AbortController();
    const sub = bus.subscribe({ signal: ac.signal, highWaterMark: 10 });
    const firstP = sub.next();
    void bus.publish("system.noted", { message: "0" });
    const first = await firstP;
    expect(first.value?.id).toBe(1);
    // 500 events land while the subscriber is not reading: far past its buffer
    for (let i = 1; i < 500; i++) void bus.publish("system.noted", { message: String(i) });
    bus.flush();
    const rest = await take(sub, 499);
    ac.abort();
    expect(rest.map((e) => e.id)).toEqual(Array.from({ length: 499 }, (_, i) => i + 2));
  });

  it("a failed commit rejects its publishers and delivers nothing", async () => {
    const bus = makeBus();
    const delivered: number[] = [];
    bus.on("*", (e) => delivered.push(e.id));
    bus.store.append = () => {
      throw new Error("disk full");
    };
    await expect(bus.publish("system.noted", { message: "lost" })).rejects.toThrow("disk full");
    expect(delivered).toEqual([]);
    expect(bus.lastId).toBe(0);
  });

  it("continues ids after a restart on the same file", async () => {
    const path = join(await import("node:os").then((os) => os.tmpdir()), `bus-${process.pid}-${Date.now()}.db`);
    const bus1 = makeBus({}, path);
    await bus1.publish("system.noted", { message: "1" });
    await bus1.publish("system.noted", { message: "2" });
    const bus2 = makeBus({}, path);
    const e = await bus2.publish("system.noted", { message: "3" });
    expect(e.id).toBe(3);
  });

  it("ends live subscribers on close and refuses new events", async () => {
    const bus = makeBus();
    const sub = bus.subscribe();
    const pending = sub.next();
    bus.close();
    expect((await pending).done).toBe(true);
    await expect(bus.publish("system.noted", { message: "late" })).rejects.toThrow(/shutting down/);
  });
});

describe("EventBus: row writes in the event's transaction", () => {
  it("commits a write with its event; a write that throws drops only its own event and rolls back only its own rows", async () => {
    const bus = makeBus();
    const sqlite = dbs[0]!.$client;
    sqlite.exec("CREATE TABLE scratch (k TEXT PRIMARY KEY, v INTEGER NOT NULL)");
    const seen: string[] = [];
    bus.on("system.noted", (e) => seen.push(e.payload.message));
    const put = (k: string, v: number) => () => void sqlite.prepare("INSERT INTO scratch (k, v) VALUES (?, ?)").run(k, v);
    const results = await Promise.allSettled([
      bus.publish("system.noted", { message: "a" }, {}, { write: put("a", 1) }),
      bus.publish("system.noted", { message: "b" }, {}, {
        write: () => {
          put("b", 2)();
          throw new Error("compare-and-set lost");
        },
      }),
      bus.publish("system.noted", { message: "c" }),
      bus.publish("system.noted", { message: "d" }, {}, { write: put("d", 4) }),
    ]);
    expect(results.map((r) => r.status)).toEqual(["fulfilled", "rejected", "fulfilled", "fulfilled"]);
    expect((results[1] as PromiseRejectedResult).reason.message).toBe("compare-and-set lost");
    expect(sqlite.prepare("SELECT k FROM scratch ORDER BY k").all()).toEqual([{ k: "a" }, { k: "d" }]);
    expect(bus.store.readAfter(0, undefined, 10).map((e) => (e.payload as { message: string }).message)).toEqual(["a", "c", "d"]);
    expect(seen).toEqual(["a", "c", "d"]);
    // the ids stay monotonic; the lost one is a gap, and the next publish goes on after the last
    const next = await bus.publish("system.noted", { message: "e" });
    expect(next.id).toBe(5);
    expect(bus.lastId).toBe(5);
  });
});
