import { and, eq } from "drizzle-orm";
import { afterAll, describe, expect, it } from "vitest";
import { EventBus } from "../events/bus";
import { STORE_KINDS, testStores } from "../testing/stores";
import type { SqliteStore } from "./sqlite-store";
import { first, type Store, type TxDb } from "./store";

/**
 * The store contract every domain builds on, on SQLite and on PostgreSQL: transactions commit or
 * roll back whole, an event's row write commits with it or not at all (its own savepoint), and a
 * compare-and-set stays exact under concurrency, also between two stores on one database.
 */
const stores = testStores();
afterAll(() => stores.close());

const row = (id: string, segment = 0) => ({ id, cwd: "/w", strategyName: "S", strategyPath: "/s.yaml", status: "running" as const, segment, startedAt: 1 });

async function segmentOf(store: Store, id: string): Promise<number | undefined> {
  const { runs } = store.t;
  return (await first(store.read.select({ segment: runs.segment }).from(runs).where(eq(runs.id, id))))?.segment;
}

/** Move the run's segment from what was read to +1: a conditional update that tells whether it won. */
async function bump(tx: TxDb, store: Store, id: string, from: number): Promise<boolean> {
  const { runs } = store.t;
  const won = await tx.update(runs).set({ segment: from + 1 }).where(and(eq(runs.id, id), eq(runs.segment, from))).returning({ id: runs.id });
  return won.length === 1;
}

describe.each(STORE_KINDS)("the store on %s", (kind) => {
  it("commits a transaction whole, and rolls back one that throws, everything it wrote", async () => {
    const store = await stores.fresh(kind);
    const { runs } = store.t;
    await store.tx(async (tx) => {
      await tx.insert(runs).values(row("kept"));
      await tx.insert(runs).values(row("kept-too"));
    });
    await expect(
      store.tx(async (tx) => {
        await tx.insert(runs).values(row("gone"));
        await tx.update(runs).set({ segment: 9 }).where(eq(runs.id, "kept"));
        throw new Error("refused");
      }),
    ).rejects.toThrow("refused");
    const ids = (await store.read.select({ id: runs.id, segment: runs.segment }).from(runs).orderBy(runs.id)).map((r) => `${r.id}:${r.segment}`);
    expect(ids).toEqual(["kept:0", "kept-too:0"]);
  });

  it("stores an event with its row writes, and drops only the event whose write throws", async () => {
    const store = await stores.fresh(kind);
    const bus = await new EventBus(store.events).open();
    const { runs } = store.t;
    const ok = (id: string) => bus.publish("system.noted", { message: id }, { runId: id }, { write: async (tx) => void (await tx.insert(runs).values(row(id))) });
    const bad = bus.publish("system.noted", { message: "bad" }, { runId: "bad" }, {
      write: async (tx) => {
        await tx.insert(runs).values(row("bad"));
        throw new Error("compare-and-set lost");
      },
    });
    const [a, b, c] = await Promise.allSettled([ok("a"), bad, ok("c")]);
    expect(a.status).toBe("fulfilled");
    expect(b).toMatchObject({ status: "rejected", reason: { message: "compare-and-set lost" } });
    expect(c.status).toBe("fulfilled");
    expect((await store.read.select({ id: runs.id }).from(runs).orderBy(runs.id)).map((r) => r.id)).toEqual(["a", "c"]);
    const stored = await store.events.readAfter(0, undefined, 10);
    expect(stored.map((e) => (e.payload as { message: string }).message)).toEqual(["a", "c"]);
    bus.close();
  });

  it("keeps a compare-and-set exact when many transactions race for one row", async () => {
    const store = await stores.fresh(kind);
    // on PostgreSQL a second store is another server; SQLite has one server per file (one connection)
    const other = kind === "postgres" ? await stores.again(store) : store;
    await store.tx(async (tx) => void (await tx.insert(store.t.runs).values(row("counted"))));
    let won = 0;
    let lost = 0;
    // 40 racers on each: each reads, then moves from what it read
    await Promise.all(
      [store, other].flatMap((s) =>
        Array.from({ length: 40 }, async () => {
          const seen = (await segmentOf(s, "counted"))!;
          if (await s.tx((tx) => bump(tx, s, "counted", seen))) won++;
          else lost++;
        }),
      ),
    );
    expect(won + lost).toBe(80);
    expect(won).toBeGreaterThan(0);
    expect(await segmentOf(store, "counted")).toBe(won);
  });

  it("sees what another store on the same database committed (a restart, or another server)", async () => {
    const store = await stores.fresh(kind);
    const bus = await new EventBus(store.events).open();
    await bus.publish("system.noted", { message: "before" }, {}, { write: async (tx) => void (await tx.insert(store.t.runs).values(row("r1"))) });
    bus.close();
    const again = await stores.again(store);
    expect(await segmentOf(again, "r1")).toBe(0);
    const events = await again.events.readAfter(0, undefined, 10);
    expect(events.map((e) => e.type)).toEqual(["system.noted"]);
  });
});

describe("the SQLite write gate", () => {
  it("keeps other writes out of a transaction that awaits, so its rollback takes only its own rows", async () => {
    const store = (await stores.fresh("sqlite")) as SqliteStore;
    const bus = new EventBus(store.events);
    const { runs } = store.t;
    let inside!: () => void;
    const entered = new Promise<void>((resolve) => (inside = resolve));
    const tx = store.tx(async (t) => {
      await t.insert(runs).values(row("rolled-back"));
      inside();
      // a plain event published while the transaction holds the connection
      for (let i = 0; i < 5; i++) await Promise.resolve();
      throw new Error("abort");
    });
    await entered;
    const published = bus.publish("system.noted", { message: "meanwhile" });
    bus.flush();
    await expect(tx).rejects.toThrow("abort");
    const event = await published;
    expect((await store.events.readAfter(0, undefined, 10)).map((e) => e.id)).toEqual([event.id]);
    expect(await segmentOf(store, "rolled-back")).toBeUndefined();
    bus.close();
  });

  it("refuses a transaction opened inside another (instead of waiting for itself forever)", async () => {
    const store = await stores.fresh("sqlite");
    await expect(store.tx(() => store.tx(async () => 1))).rejects.toThrow(/inside another one/);
    expect(await store.tx(async () => 2)).toBe(2);
  });
});
