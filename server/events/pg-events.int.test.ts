import { spawn, type ChildProcess } from "node:child_process";
import { join } from "node:path";
import { createInterface } from "node:readline";
import postgres, { type Sql } from "postgres";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { BusEvent, EventScope } from "../../shared/events";
import { closePg, openPg } from "../db/pg/client";
import { REPO_ROOT } from "../paths";
import { createTestDatabase, type TestDatabase } from "../testing/postgres";
import { EventBus } from "./bus";
import { events as pgEvents } from "../db/pg/schema";
import { EVENTS_CHANNEL, PgEventStore } from "./pg-event-store";

let pg: TestDatabase;
const clients: Sql[] = [];
const children = new Set<ChildProcess>();

beforeAll(async () => {
  pg = await createTestDatabase();
  await closePg(await openPg({ url: pg.url }));
});
afterAll(async () => {
  for (const c of children) c.kill("SIGKILL");
  await Promise.all(clients.map((c) => c.end({ timeout: 5 })));
  await pg?.drop();
});

function client(): Sql {
  const sql = postgres(pg.url, { max: 4, onnotice: () => {} });
  clients.push(sql);
  return sql;
}

async function truncate(): Promise<void> {
  await client()`TRUNCATE events`;
}

async function take(sub: AsyncGenerator<BusEvent>, n: number): Promise<number[]> {
  const ids: number[] = [];
  while (ids.length < n) {
    const { value, done } = await sub.next();
    if (done) break;
    ids.push(value.id);
  }
  return ids;
}

const range = (from: number, to: number) => Array.from({ length: to - from + 1 }, (_, i) => from + i);

describe("events on PostgreSQL (several processes, one ordered appender)", () => {
  it("delivers another server's events live, replays after lastEventId, and sends one NOTIFY per commit", async () => {
    await truncate();
    const storeA = new PgEventStore(client());
    let commits = 0;
    const append = storeA.append.bind(storeA);
    storeA.append = (rows, writes) => {
      commits++;
      return append(rows, writes);
    };
    const busA = await new EventBus(storeA).open();
    const busB = await new EventBus(new PgEventStore(client())).open();
    let notifications = 0;
    await client().listen(EVENTS_CHANNEL, () => notifications++);
    const live = busB.subscribe();
    for (let burst = 0; burst < 3; burst++) {
      await Promise.all(Array.from({ length: 100 }, (_, i) => busA.publish("system.noted", { message: `${burst}.${i}` })));
    }
    expect(await take(live, 300)).toEqual(range(1, 300));
    const replay = busB.subscribe({ afterId: 150 });
    expect(await take(replay, 150)).toEqual(range(151, 300));
    await busA.publish("system.noted", { message: "one more" });
    expect(await take(replay, 1)).toEqual([301]);
    expect(await take(live, 1)).toEqual([301]);
    await new Promise((r) => setTimeout(r, 200));
    expect(commits).toBe(4);
    expect(notifications).toBe(commits);
    expect(busB.lastId).toBe(301);
    busA.close();
    busB.close();
  });

  it("stores the same columns on the plain path (postgres.js) and with row writes (drizzle's transaction), numbered in order", async () => {
    await truncate();
    const sql = client();
    const bus = await new EventBus(new PgEventStore(sql)).open();
    // key order, a NUL escape and non-ASCII kept as written; every scope column; a write that fails drops its row only
    const payload = { message: "z\u0000é", data: { b: 2, a: 1 } };
    const scopes: EventScope[] = [{}, { runId: "r" }, { agentId: "a", conversationId: "c" }, { daemonId: "d" }];
    const plain = await Promise.all(scopes.map((scope) => bus.publish("system.noted", payload, scope)));
    const written = await Promise.all(
      scopes.map((scope, i) =>
        bus.publish("system.noted", payload, scope, {
          write: async (tx) => {
            await tx.select().from(pgEvents).limit(1);
            if (i === 2) throw new Error("lost the race");
          },
        }),
      ).map((p) => p.catch((err: Error) => err.message)),
    );
    expect(plain.map((e) => e.id)).toEqual([1, 2, 3, 4]);
    expect(written.map((e) => (typeof e === "string" ? e : e.id))).toEqual([5, 6, "lost the race", 7]);
    const rows = await sql<Array<Record<string, unknown>>>`SELECT id::int, type, run_id, agent_id, daemon_id, conversation_id, payload FROM events ORDER BY id`;
    const expected = (id: number, scope: EventScope) => ({
      id,
      type: "system.noted",
      run_id: scope.runId ?? null,
      agent_id: scope.agentId ?? null,
      daemon_id: scope.daemonId ?? null,
      conversation_id: scope.conversationId ?? null,
      payload: JSON.stringify(payload),
    });
    expect(rows).toEqual([...scopes.map((s, i) => expected(i + 1, s)), expected(5, scopes[0]!), expected(6, scopes[1]!), expected(7, scopes[3]!)]);
    const [ts] = await sql<Array<{ ts: string }>>`SELECT ts::text FROM events WHERE id = 1`;
    expect(new Date(Number(ts!.ts)).toISOString()).toBe(plain[0]!.ts);
    bus.close();
  });

  it("two buses publishing at once: each sees every event once, in id order, its own included", async () => {
    await truncate();
    const busA = await new EventBus(new PgEventStore(client())).open();
    const busB = await new EventBus(new PgEventStore(client())).open();
    const seenA: number[] = [];
    const seenB: number[] = [];
    busA.on("*", (e) => seenA.push(e.id));
    busB.on("*", (e) => seenB.push(e.id));
    const published = await Promise.all(
      Array.from({ length: 20 }, async (_, round) => {
        const bus = round % 2 === 0 ? busA : busB;
        await new Promise((r) => setTimeout(r, Math.random() * 20));
        return Promise.all(Array.from({ length: 50 }, (_, i) => bus.publish("system.noted", { message: `${round}.${i}` })));
      }),
    );
    const ids = published.flat().map((e) => e.id);
    expect(new Set(ids).size).toBe(1000);
    const deadline = Date.now() + 10_000;
    while ((seenA.length < 1000 || seenB.length < 1000) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
    expect(seenA).toEqual(range(1, 1000));
    expect(seenB).toEqual(range(1, 1000));
    busA.close();
    busB.close();
  });

  it("8 publisher processes, 5 subscribers with random lastEventIds in two processes, one restarted mid-way: every subscriber sees every id once, in order", async () => {
    await truncate();
    const seed = await new EventBus(new PgEventStore(client())).open();
    await Promise.all(Array.from({ length: 200 }, (_, i) => seed.publish("system.noted", { message: `seed ${i}` })));
    seed.close();
    const PER_PUBLISHER = 250;
    const TOTAL = 200 + 8 * PER_PUBLISHER;
    const seen = new Map<string, number[]>();
    const start = new Map<string, number>();
    for (const name of ["s1", "s2", "s3", "s4", "s5"]) {
      const after = Math.floor(Math.random() * 200);
      start.set(name, after);
      seen.set(name, []);
    }
    const child = (args: string[]) => {
      const proc = spawn(process.execPath, ["--import", "tsx", join(REPO_ROOT, "server", "testing", "pg-events-child.ts"), ...args], { cwd: REPO_ROOT, stdio: ["ignore", "pipe", "inherit"] });
      children.add(proc);
      proc.once("exit", () => children.delete(proc));
      const lines = createInterface({ input: proc.stdout! });
      const ready = new Promise<void>((resolve) => {
        lines.on("line", (line) => {
          if (line === "ready" || line === "done") return resolve();
          const [name, id] = line.split(" ") as [string, string];
          seen.get(name)?.push(Number(id));
        });
      });
      const exited = new Promise<void>((resolve) => proc.once("exit", () => resolve()));
      return { proc, ready, exited };
    };
    const cursor = (name: string) => seen.get(name)!.at(-1) ?? start.get(name)!;
    const subscribe = (names: string[]) => child(["subscribe", pg.url, ...names.map((n) => `${n}:${cursor(n)}`)]);
    const serverA = subscribe(["s1", "s2", "s3"]);
    let serverB = subscribe(["s4", "s5"]);
    await Promise.all([serverA.ready, serverB.ready]);
    const publishers = Array.from({ length: 8 }, (_, i) => child(["publish", pg.url, `p${i}`, String(PER_PUBLISHER)]));
    // the second server is killed while the publishers run, and started again from its subscribers' cursors
    await new Promise((r) => setTimeout(r, 400));
    serverB.proc.kill("SIGKILL");
    await serverB.exited;
    serverB = subscribe(["s4", "s5"]);
    await serverB.ready;
    await Promise.all(publishers.map((p) => p.exited));
    expect(publishers.map((p) => p.proc.exitCode)).toEqual(Array(8).fill(0));
    const deadline = Date.now() + 30_000;
    while ([...seen.values()].some((ids) => (ids.at(-1) ?? 0) < TOTAL) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
    for (const [name, ids] of seen) {
      // contiguous from the subscriber's lastEventId to the last event: nothing skipped, nothing twice
      expect({ name, ids }).toEqual({ name, ids: range(start.get(name)! + 1, TOTAL) });
    }
    serverA.proc.kill();
    serverB.proc.kill();
  }, 120_000);
});
