import { spawn, type ChildProcess } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { createInterface } from "node:readline";
import { eq } from "drizzle-orm";
import { afterAll, describe, expect, it } from "vitest";
import type { AgentStatus } from "../../shared/statuses";
import { openPgStore } from "../db/pg/pg-store";
import { openSqliteStore } from "../db/sqlite-store";
import type { Store } from "../db/store";
import { EventBus } from "../events/bus";
import { REPO_ROOT } from "../paths";
import { createTestDatabase, type TestDatabase } from "../testing/postgres";
import { STORE_KINDS, type StoreKind } from "../testing/stores";
import { AgentLifecycle } from "./agent-lifecycle";
import { AgentMessages } from "./agent-messages";
import { AgentRecords } from "./agent-records";

/**
 * Two processes on one store (a SQLite file, or a PostgreSQL database: two servers) move the same
 * agent at the same moment: exactly one wins. And a follow-up queued by one while the other moves
 * the agent to idle is never stranded: either it is queued and the agent does not go idle, or the
 * agent goes idle and the follow-up is refused (delivered now instead).
 */

const dir = mkdtempSync(join(tmpdir(), "switchyard-lifecycle-"));
const migrationsDir = resolve(REPO_ROOT, "drizzle");
let pg: TestDatabase | undefined;
afterAll(async () => {
  await pg?.drop();
  rmSync(dir, { recursive: true, force: true });
});

type Answer = { ok?: boolean; status?: string; code?: string; ready?: boolean };

/** This process's side (a store, its bus, the agents' parts) and the second process on the same database. */
async function twoProcesses(kind: StoreKind) {
  let where: string;
  let store: Store;
  if (kind === "sqlite") {
    where = join(dir, `switchyard-${Date.now()}.db`);
    store = openSqliteStore({ path: where, migrationsDir });
  } else {
    pg ??= await createTestDatabase();
    where = pg.url;
    store = await openPgStore({ url: where, max: 4 });
  }
  const bus = await new EventBus(store.events).open();
  const records = new AgentRecords(store);
  const child: ChildProcess = spawn(process.execPath, ["--import", "tsx", join(REPO_ROOT, "server", "testing", "lifecycle-child.ts"), where, migrationsDir], { cwd: REPO_ROOT, stdio: ["pipe", "pipe", "inherit"] });
  const answers = createInterface({ input: child.stdout! })[Symbol.asyncIterator]();
  const next = async () => JSON.parse(((await answers.next()).value as string) ?? "null") as Answer;
  expect(await next()).toEqual({ ready: true });
  let round = 0;
  return {
    store,
    bus,
    records,
    lifecycle: new AgentLifecycle(records, bus),
    messages: new AgentMessages(store),
    /** A new agent put straight into `status` (test set-up: the only write of status outside `transition`). */
    async agentIn(status: AgentStatus): Promise<string> {
      const id = `agent_${kind}_${Date.now()}_${++round}`;
      const now = Date.now();
      await records.insert({ id, alias: `a-${id}`, provider: "fake", mode: "execute", permissionMode: "acceptEdits", prompt: "p", task: "t", workspacePath: "/nowhere", workspaceKind: "worktree", configDir: "/nowhere", createdAt: now, updatedAt: now });
      await store.tx(async (tx) => void (await tx.update(store.t.agents).set({ status }).where(eq(store.t.agents.id, id))));
      return id;
    },
    /** Ask the second process; it starts when `go()` is called. */
    ask(req: Record<string, unknown>): { go: () => void; answer: Promise<Answer> } {
      const go = join(dir, `go-${kind}-${Date.now()}-${++round}`);
      child.stdin!.write(`${JSON.stringify({ ...req, go })}\n`);
      return { go: () => writeFileSync(go, ""), answer: next() };
    },
    async close() {
      child.kill();
      bus.close();
      await store.close();
    },
  };
}

const settle = <T>(p: Promise<T>) =>
  p.then(
    (value) => ({ ok: true as const, value, code: undefined as string | undefined }),
    (err: { code?: string }) => ({ ok: false as const, value: undefined, code: err.code ?? String(err) }),
  );

describe.each(STORE_KINDS)("the agent lifecycle across processes on %s", (kind) => {
  it("20 rounds of two processes moving one agent from the same version: one wins, the other gets a clear error; one event each", async () => {
    const w = await twoProcesses(kind);
    try {
      const outcomes: string[] = [];
      const ids: string[] = [];
      for (let round = 0; round < 20; round++) {
        const id = await w.agentIn("running");
        ids.push(id);
        const theirs = w.ask({ agentId: id, move: "finished", expectedVersion: 0 });
        await new Promise((r) => setTimeout(r, 30));
        theirs.go();
        const [mine, their] = await Promise.all([
          settle(w.lifecycle.transition(id, "stopped", { expectedVersion: 0, event: { type: "agent.stopped", payload: { reason: "from the test process" } } })),
          theirs.answer,
        ]);
        expect([mine.ok, their.ok].filter(Boolean)).toHaveLength(1);
        const loser = mine.ok ? their : mine;
        expect(["AGENT_VERSION_CONFLICT", "AGENT_TRANSITION_INVALID"]).toContain(loser.code);
        const row = await w.records.get(id);
        expect(row.version).toBe(1);
        expect(row.status).toBe(mine.ok ? "stopped" : "idle");
        expect(await w.bus.store.readAfter(0, { kind: "agent", id }, 10)).toHaveLength(1);
        outcomes.push(mine.ok ? "test process" : "second process");
      }
      // both processes' events are in the store, with distinct ids
      const all = (await w.bus.store.readAfter(0, undefined, 1000)).filter((e) => e.scope.agentId && ids.includes(e.scope.agentId));
      expect(new Set(all.map((e) => e.id)).size).toBe(all.length);
      expect(all).toHaveLength(20);
      console.log(`${kind} winners: ${outcomes.filter((o) => o === "test process").length} test process, ${outcomes.filter((o) => o === "second process").length} second process`);
    } finally {
      await w.close();
    }
  });

  it("20 rounds of a follow-up queued by one process while the other moves the agent to idle: never stranded, never both", async () => {
    const w = await twoProcesses(kind);
    try {
      const seen = new Map<string, number>();
      for (let round = 0; round < 20; round++) {
        const id = await w.agentIn("running");
        // alternate who queues and who finishes
        const childQueues = round % 2 === 0;
        const theirs = childQueues ? w.ask({ agentId: id, message: `follow-up ${round}` }) : w.ask({ agentId: id, move: "finished", guarded: true });
        await new Promise((r) => setTimeout(r, 30));
        theirs.go();
        const mine = childQueues
          ? settle(w.lifecycle.transition(id, "finished", { event: { type: "agent.went_idle", payload: { result: null } }, guard: (tx) => w.messages.assertNoneWaiting(tx, id) }))
          : settle(w.bus.publish("agent.message_queued", { messageId: "m", text: "x", queued: 1 }, { agentId: id }, { write: async (tx) => void (await w.messages.enqueueIfLive(tx, id, `follow-up ${round}`)) }));
        const [m, t] = await Promise.all([mine, theirs.answer]);
        const queued = childQueues ? t : m;
        const finished = childQueues ? m : t;
        const row = await w.records.get(id);
        const waiting = await w.messages.undelivered(id);
        if (queued.ok) {
          // queued first: the agent did not go idle with it waiting
          expect(finished).toMatchObject({ ok: false, code: "AGENT_FOLLOW_UPS_PENDING" });
          expect(row.status).toBe("running");
          expect(waiting).toHaveLength(1);
        } else {
          // idle first: the follow-up was refused (the service then delivers it at once)
          expect(queued.code).toBe("AGENT_NOT_LIVE");
          expect(finished.ok).toBe(true);
          expect(row.status).toBe("idle");
          expect(waiting).toHaveLength(0);
        }
        const outcome = queued.ok ? "queued first" : "idle first";
        seen.set(outcome, (seen.get(outcome) ?? 0) + 1);
      }
      console.log(`${kind} follow-up vs idle: ${[...seen].map(([k, v]) => `${v} ${k}`).join(", ")}`);
    } finally {
      await w.close();
    }
  });
});
