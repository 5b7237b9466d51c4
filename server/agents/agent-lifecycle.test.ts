import { resolve } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import type { AgentStatus } from "../../shared/statuses";
import { AgentStatus as AgentStatusSchema } from "../../shared/statuses";
import { closeDb, openDb, type Db } from "../db/client";
import { EventBus } from "../events/bus";
import { EventStore } from "../events/event-store";
import { AGENT_MOVES, AGENT_STATUSES_IN_TABLE, AgentLifecycle, nextStatus, type AgentMove } from "./agent-lifecycle";
import { AgentMessages, AgentNotLive, UndeliveredFollowUps } from "./agent-messages";
import { AgentRecords } from "./agent-records";

const migrationsDir = resolve(import.meta.dirname, "..", "..", "drizzle");
let dbs: Db[] = [];
afterEach(() => {
  for (const db of dbs) closeDb(db);
  dbs = [];
});

function world(path = ":memory:") {
  const db = openDb({ path, migrationsDir });
  dbs.push(db);
  const records = new AgentRecords(db);
  const bus = new EventBus(new EventStore(db));
  return { db, records, bus, lifecycle: new AgentLifecycle(records, bus), messages: new AgentMessages(db) };
}

let n = 0;
/** An agent row put straight into `status` (test set-up: the only write of status outside `transition`). */
function agentIn(w: ReturnType<typeof world>, status: AgentStatus): string {
  const id = `agent_t${++n}`;
  const now = Date.now();
  w.records.insert({ id, alias: `a-${n}`, provider: "fake", mode: "execute", permissionMode: "acceptEdits", prompt: "p", task: "t", workspacePath: "/nowhere", workspaceKind: "worktree", configDir: "/nowhere", createdAt: now, updatedAt: now });
  w.db.$client.prepare("UPDATE agents SET status = ? WHERE id = ?").run(status, id);
  return id;
}

const MOVES = Object.keys(AGENT_MOVES) as AgentMove[];
const event = { type: "agent.status_changed", payload: { status: "running" } } as const;

describe("the agent transition table", () => {
  it("covers every status the catalogue has", () => {
    expect([...AGENT_STATUSES_IN_TABLE].sort()).toEqual([...AgentStatusSchema.options].sort());
  });

  const pairs = AGENT_STATUSES_IN_TABLE.flatMap((from) => MOVES.map((move) => [from, move] as const));
  it.each(pairs)("from %s, %s: allowed moves write status + version + event together; others are refused and write nothing", async (from, move) => {
    const w = world();
    const id = agentIn(w, from);
    const before = w.bus.store.count();
    const to = nextStatus(from, move);
    const attempt = w.lifecycle.transition(id, move, { expectedVersion: 0, patch: { statusReason: "why" }, event });
    if (to === null) {
      await expect(attempt).rejects.toMatchObject({ code: "AGENT_TRANSITION_INVALID" });
      expect(w.records.get(id)).toMatchObject({ status: from, version: 0, statusReason: null });
      expect(w.bus.store.count()).toBe(before);
      return;
    }
    const row = await attempt;
    expect(row).toMatchObject({ status: to, version: 1, statusReason: "why" });
    expect(w.bus.store.count()).toBe(before + 1);
    expect(w.bus.store.readAfter(0, { kind: "agent", id }, 10).map((e) => e.type)).toEqual(["agent.status_changed"]);
  });

  it("refuses a stale expectedVersion, and a guard that throws, writing nothing", async () => {
    const w = world();
    const id = agentIn(w, "running");
    await w.lifecycle.transition(id, "launched", { expectedVersion: 0, event });
    await expect(w.lifecycle.transition(id, "finished", { expectedVersion: 0, event })).rejects.toMatchObject({ code: "AGENT_VERSION_CONFLICT" });
    await expect(w.lifecycle.transition(id, "finished", { expectedVersion: 1, event, guard: () => { throw new Error("no"); } })).rejects.toThrow("no");
    expect(w.records.get(id)).toMatchObject({ status: "running", version: 1 });
    expect(w.bus.store.readAfter(0, { kind: "agent", id }, 10)).toHaveLength(1);
  });

  it("two moves from one read: exactly one wins, in one process (one bus batch)", async () => {
    const w = world();
    const id = agentIn(w, "running");
    const results = await Promise.allSettled([
      w.lifecycle.transition(id, "finished", { expectedVersion: 0, event }),
      w.lifecycle.transition(id, "stopped", { expectedVersion: 0, event }),
    ]);
    expect(results.map((r) => r.status).sort()).toEqual(["fulfilled", "rejected"]);
    expect((results.find((r) => r.status === "rejected") as PromiseRejectedResult).reason).toMatchObject({ code: "AGENT_VERSION_CONFLICT" });
    expect(w.records.get(id).version).toBe(1);
  });
});

describe("follow-ups as rows", () => {
  it("are queued only while the agent is live; idle is refused while one waits; delivered once, in order", async () => {
    const w = world();
    const id = agentIn(w, "running");
    const a = w.messages.enqueueIfLive(id, "first");
    const b = w.messages.enqueueIfLive(id, "second");
    expect([a.seq, b.seq]).toEqual([1, 2]);
    await expect(w.lifecycle.transition(id, "finished", { event, guard: () => w.messages.assertNoneWaiting(id) })).rejects.toBeInstanceOf(UndeliveredFollowUps);
    expect(w.records.get(id).status).toBe("running");
    const waiting = w.messages.undelivered(id);
    expect(waiting.map((m) => m.text)).toEqual(["first", "second"]);
    await w.lifecycle.transition(id, "launched", { event, also: () => w.messages.markDelivered(waiting.map((m) => m.id)) });
    expect(w.messages.undelivered(id)).toEqual([]);
    expect(() => w.messages.markDelivered([a.id])).toThrow(/delivered meanwhile/);
    await w.lifecycle.transition(id, "finished", { event, guard: () => w.messages.assertNoneWaiting(id) });
    expect(() => w.messages.enqueueIfLive(id, "late")).toThrow(AgentNotLive);
  });
});
