import { resolve } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import type { AgentStatus } from "../../shared/statuses";
import { AgentStatus as AgentStatusSchema } from "../../shared/statuses";
import { openSqliteStore, type SqliteStore } from "../db/sqlite-store";
import { EventBus } from "../events/bus";
import { AGENT_MOVES, AGENT_STATUSES_IN_TABLE, AgentLifecycle, nextStatus, type AgentMove } from "./agent-lifecycle";
import { AgentMessages, AgentNotLive, UndeliveredFollowUps } from "./agent-messages";
import { AgentRecords } from "./agent-records";

const migrationsDir = resolve(import.meta.dirname, "..", "..", "drizzle");
let stores: SqliteStore[] = [];
afterEach(async () => {
  for (const store of stores) await store.close();
  stores = [];
});

function world(path = ":memory:") {
  const store = openSqliteStore({ path, migrationsDir });
  stores.push(store);
  const records = new AgentRecords(store);
  const bus = new EventBus(store.events);
  return { store, records, bus, lifecycle: new AgentLifecycle(records, bus), messages: new AgentMessages(store) };
}

let n = 0;
/** An agent row put straight into `status` (test set-up: the only write of status outside `transition`). */
async function agentIn(w: ReturnType<typeof world>, status: AgentStatus): Promise<string> {
  const id = `agent_t${++n}`;
  const now = Date.now();
  await w.records.insert({ id, alias: `a-${n}`, provider: "fake", mode: "execute", permissionMode: "acceptEdits", prompt: "p", task: "t", workspacePath: "/nowhere", workspaceKind: "worktree", configDir: "/nowhere", createdAt: now, updatedAt: now });
  w.store.db.$client.prepare("UPDATE agents SET status = ? WHERE id = ?").run(status, id);
  return id;
}

/** Queue a follow-up the way the service does: with its event, in the event's transaction. */
async function enqueue(w: ReturnType<typeof world>, id: string, text: string) {
  let row: Awaited<ReturnType<AgentMessages["enqueueIfLive"]>> | undefined;
  await w.bus.publish("agent.message_queued", { messageId: "m", text, queued: 1 }, { agentId: id }, { write: async (tx) => void (row = await w.messages.enqueueIfLive(tx, id, text)) });
  return row!;
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
    const id = await agentIn(w, from);
    const before = w.bus.store.count();
    const to = nextStatus(from, move);
    const attempt = w.lifecycle.transition(id, move, { expectedVersion: 0, patch: { statusReason: "why" }, event });
    if (to === null) {
      await expect(attempt).rejects.toMatchObject({ code: "AGENT_TRANSITION_INVALID" });
      expect(await w.records.get(id)).toMatchObject({ status: from, version: 0, statusReason: null });
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
    const id = await agentIn(w, "running");
    await w.lifecycle.transition(id, "launched", { expectedVersion: 0, event });
    await expect(w.lifecycle.transition(id, "finished", { expectedVersion: 0, event })).rejects.toMatchObject({ code: "AGENT_VERSION_CONFLICT" });
    await expect(w.lifecycle.transition(id, "finished", { expectedVersion: 1, event, guard: async () => { throw new Error("no"); } })).rejects.toThrow("no");
    expect(await w.records.get(id)).toMatchObject({ status: "running", version: 1 });
    expect(w.bus.store.readAfter(0, { kind: "agent", id }, 10)).toHaveLength(1);
  });

  it("two moves from one read: exactly one wins, in one process (one bus batch)", async () => {
    const w = world();
    const id = await agentIn(w, "running");
    const results = await Promise.allSettled([
      w.lifecycle.transition(id, "finished", { expectedVersion: 0, event }),
      w.lifecycle.transition(id, "stopped", { expectedVersion: 0, event }),
    ]);
    expect(results.map((r) => r.status).sort()).toEqual(["fulfilled", "rejected"]);
    expect((results.find((r) => r.status === "rejected") as PromiseRejectedResult).reason).toMatchObject({ code: "AGENT_VERSION_CONFLICT" });
    expect((await w.records.get(id)).version).toBe(1);
  });
});

describe("follow-ups as rows", () => {
  it("are queued only while the agent is live; idle is refused while one waits; delivered once, in order", async () => {
    const w = world();
    const id = await agentIn(w, "running");
    const a = await enqueue(w, id, "first");
    const b = await enqueue(w, id, "second");
    expect([a.seq, b.seq]).toEqual([1, 2]);
    await expect(w.lifecycle.transition(id, "finished", { event, guard: (tx) => w.messages.assertNoneWaiting(tx, id) })).rejects.toBeInstanceOf(UndeliveredFollowUps);
    expect((await w.records.get(id)).status).toBe("running");
    const waiting = await w.messages.undelivered(id);
    expect(waiting.map((m) => m.text)).toEqual(["first", "second"]);
    await w.lifecycle.transition(id, "launched", { event, also: (tx) => w.messages.markDelivered(tx, waiting.map((m) => m.id)) });
    expect(await w.messages.undelivered(id)).toEqual([]);
    await expect(w.store.tx((tx) => w.messages.markDelivered(tx, [a.id]))).rejects.toThrow(/delivered meanwhile/);
    await w.lifecycle.transition(id, "finished", { event, guard: (tx) => w.messages.assertNoneWaiting(tx, id) });
    await expect(enqueue(w, id, "late")).rejects.toThrow(AgentNotLive);
    expect(w.bus.store.readAfter(0, { kind: "agent", id }, 10).map((e) => e.type)).toEqual(["agent.message_queued", "agent.message_queued", "agent.status_changed", "agent.status_changed"]);
  });
});
