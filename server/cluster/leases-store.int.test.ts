import { eq } from "drizzle-orm";
import { afterAll, describe, expect, it } from "vitest";
import { IDLE_IN_TRANSACTION_MS } from "../db/pg/client";
import type { PgStore } from "../db/pg/pg-store";
import type { Store } from "../db/store";
import type { DomainError } from "../errors";
import { EventBus } from "../events/bus";
import { EVENTS_APPEND_LOCK, type PgEventStore } from "../events/pg-event-store";
import { AgentRecords } from "../agents/agent-records";
import { agentLogStoreOf } from "../agents/log-storage";
import { testStores } from "../testing/stores";
import { LeaseBook } from "./leases";

/**
 * The fence on an owner's writes (issue 18 item 4: "a stale epoch's writes are refused"), on
 * PostgreSQL shared by two servers: what a server publishes as the owner of a run, a daemon or
 * the watcher of an agent (events, streamed deltas among them, and agent log lines) is stored
 * only while its lease is still its own at its epoch. A takeover waits for the append under way,
 * so the cut is exact. SQLite has one server per data dir: nothing to fence there.
 */
const stores = testStores();
afterAll(() => stores.close());

/** Two servers on one database, each with its clock (B's runs ahead to see A's lease expired). */
async function twoServers() {
  const storeA = await stores.fresh("postgres");
  const storeB = await stores.again(storeA);
  let skew = 0;
  const a = new LeaseBook(storeA, "server-a");
  const b = new LeaseBook(storeB, "server-b", undefined, () => Date.now() + skew);
  const busA = await new EventBus(storeA.events).open();
  return { storeA, storeB, a, b, busA, expireA: () => (skew = 60_000) };
}

const codeOf = (r: PromiseSettledResult<unknown>) => (r.status === "rejected" ? (r.reason as DomainError).code : "stored");

async function eventsOf(store: Store, runId: string): Promise<Array<{ type: string; payload: unknown }>> {
  const out = await store.events.readAfter(0, { kind: "run", id: runId }, 1000);
  return out.map((e) => ({ type: e.type, payload: e.payload }));
}

describe("fenced writes on PostgreSQL (two servers)", () => {
  it("an owner's events are stored while it holds the lease; after a takeover they are refused (LEASE_LOST) and counted, the unfenced ones of the same batch stored", async () => {
    const { storeA, a, b, busA, expireA } = await twoServers();
    expect(await a.acquire("run", "r1")).toBe(1);
    const fence = () => a.fenceOf("run", "r1");
    expect(fence()).toEqual({ kind: "run", id: "r1", epoch: 1, serverId: "server-a" });

    await busA.publish("run.warned", { message: "before" }, { runId: "r1" }, { fence: fence()! });
    // B takes the run over (A's lease looks expired to it): A has not noticed yet and still holds epoch 1
    expireA();
    expect(await b.acquire("run", "r1", { takeover: true })).toBe(2);
    expect(a.holds("run", "r1")).toBe(true);

    // one batch: a stale delta, an unfenced event, a stale warning
    const settled = await Promise.allSettled([
      busA.publish("run.warned", { message: "stale 1" }, { runId: "r1" }, { fence: fence()! }),
      busA.publish("run.warned", { message: "not the owner's" }, { runId: "r1" }),
      busA.publish("run.warned", { message: "stale 2" }, { runId: "r1" }, { fence: fence()! }),
    ]);
    expect(settled.map(codeOf)).toEqual(["LEASE_LOST", "stored", "LEASE_LOST"]);
    expect((storeA.events as PgEventStore).refused.get("run:r1")).toBe(2);

    // A's renewal finds the lease gone; what it still writes for the run stays refused
    expect(await a.renew()).toEqual([{ kind: "run", id: "r1" }]);
    expect(a.fenceOf("run", "r1")?.epoch).toBe(1);
    const after = await Promise.allSettled([busA.publish("run.warned", { message: "stale 3" }, { runId: "r1" }, { fence: fence()! })]);
    expect(after.map(codeOf)).toEqual(["LEASE_LOST"]);
    await expect(storeA.tx((tx) => a.fence(tx, "run", "r1"))).rejects.toMatchObject({ code: "LEASE_LOST" });

    expect((await eventsOf(storeA, "r1")).map((e) => (e.payload as { message: string }).message)).toEqual(["before", "not the owner's"]);
  });

  it("a lease taken while a renewal runs is not taken for lost by it", async () => {
    const { storeA } = await twoServers();
    // the renewal's transaction answers only once the take below is done: its UPDATE never saw the new row
    let hold: Promise<void> | undefined;
    let release!: () => void;
    const slowed: Store = Object.create(storeA, {
      tx: {
        value: async <T>(fn: Parameters<Store["tx"]>[0]) => {
          const gate = hold;
          hold = undefined;
          const out = (await storeA.tx(fn)) as T;
          await gate;
          return out;
        },
      },
    });
    const a = new LeaseBook(slowed, "server-a");
    await a.acquire("run", "r0");
    hold = new Promise<void>((r) => (release = r));
    const renewing = a.renew();
    expect(await a.acquire("daemon", "d-new")).toBe(1);
    release();
    expect(await renewing).toEqual([]);
    expect(a.holds("daemon", "d-new")).toBe(true);
    await storeA.tx((tx) => a.fence(tx, "daemon", "d-new"));
    expect(await a.renew()).toEqual([]);
  });

  it("a refused event's row write is not applied either", async () => {
    const { storeA, a, b, busA, expireA } = await twoServers();
    await a.acquire("daemon", "d1");
    const fence = a.fenceOf("daemon", "d1")!;
    expireA();
    await b.acquire("daemon", "d1", { takeover: true });
    const { servers } = storeA.t;
    const write = async (tx: Parameters<Parameters<Store["tx"]>[0]>[0]) =>
      void (await tx.insert(servers).values({ id: "written-by-a", url: "u", hostname: "h", pid: 1, version: "v", startedAt: 1, heartbeatAt: 1, stoppedAt: null }));
    await expect(busA.publish("daemon.snapshotted", { summary: "s", savedAt: new Date().toISOString(), pendingEventCount: 0 }, { daemonId: "d1" }, { fence, write })).rejects.toMatchObject({ code: "LEASE_LOST" });
    expect(await storeA.read.select().from(servers).where(eq(servers.id, "written-by-a"))).toEqual([]);
    expect(await storeA.events.readAfter(0, { kind: "daemon", id: "d1" }, 10)).toEqual([]);
  });

  it("a takeover waits for the append under way (it holds the append lock), so no fenced event commits after it", async () => {
    const { storeA, a, b, expireA } = await twoServers();
    await a.acquire("run", "r2");
    expireA();
    const raw = (storeA as PgStore).db.$client;
    let release!: () => void;
    const held = new Promise<void>((r) => (release = r));
    let locked!: () => void;
    const isLocked = new Promise<void>((r) => (locked = r));
    const appendUnderWay = raw.begin(async (tx) => {
      await tx`SELECT pg_advisory_xact_lock(${EVENTS_APPEND_LOCK})`;
      locked();
      await held;
    });
    await isLocked;
    let taken: number | undefined;
    const takeover = b.acquire("run", "r2", { takeover: true }).then((e) => (taken = e));
    await new Promise((r) => setTimeout(r, 400));
    expect(taken).toBeUndefined();
    release();
    await appendUnderWay;
    await takeover;
    expect(taken).toBe(2);
    // and a server stopped dead inside a transaction does not hold the append lock for long
    const [setting] = await raw<Array<{ idle_in_transaction_session_timeout: string }>>`SHOW idle_in_transaction_session_timeout`;
    expect(setting!.idle_in_transaction_session_timeout).toBe(`${IDLE_IN_TRANSACTION_MS / 1000}s`);
  });

  it("an agent's log lines under a stale fence are refused and its counters stay; a note beside them is stored", async () => {
    const { storeA, a, b, expireA } = await twoServers();
    const records = new AgentRecords(storeA);
    const now = Date.now();
    await records.insert({ id: "agent_f", alias: "fenced", provider: "fake", mode: "execute", permissionMode: "acceptEdits", prompt: "p", task: "t", workspacePath: "/w", workspaceKind: "worktree", configDir: "/c", createdAt: now, updatedAt: now });
    const logs = agentLogStoreOf(storeA);
    await a.acquire("agent", "agent_f");
    const fence = a.fenceOf("agent", "agent_f")!;
    await logs.append("agent_f", 1, ["one", "two"], 10, fence);

    expireA();
    await b.acquire("agent", "agent_f", { takeover: true });
    const settled = await Promise.allSettled([logs.append("agent_f", 1, ["three (stale)"], 20, fence), logs.append("agent_f", 1, ["a note"])]);
    expect(settled.map(codeOf)).toEqual(["LEASE_LOST", "stored"]);
    expect((await logs.readLines("agent_f", 0, 10)).map((l) => l.raw)).toEqual(["one", "two", "a note"]);
    const row = await records.get("agent_f");
    expect(row.lineCount).toBe(3);
    expect(row.outputOffset).toBe(10);

    // its row gone (the log outlives it): still refused under the stale fence
    const { agents } = storeA.t;
    await storeA.tx((tx) => tx.delete(agents).where(eq(agents.id, "agent_f")));
    await expect(logs.append("agent_f", 1, ["four (stale)"], 30, fence)).rejects.toMatchObject({ code: "LEASE_LOST" });
    await logs.append("agent_f", 1, ["five"]);
    expect((await logs.readLines("agent_f", 0, 10)).map((l) => l.raw)).toEqual(["one", "two", "a note", "five"]);
  });
});
