import { eq } from "drizzle-orm";
import { afterAll, describe, expect, it } from "vitest";
import type { AgentStatus } from "../../shared/statuses";
import type { Store } from "../db/store";
import { EventBus } from "../events/bus";
import { STORE_KINDS, testStores } from "../testing/stores";
import { AgentApprovals } from "./agent-approvals";
import { AGENT_MOVES, AGENT_STATUSES_IN_TABLE, AgentLifecycle, nextStatus, type AgentMove } from "./agent-lifecycle";
import { AgentMessages, AgentNotLive, UndeliveredFollowUps } from "./agent-messages";
import { agentLogStoreOf } from "./log-storage";
import { AgentRecords } from "./agent-records";

/**
 * The agents domain on both stores (SQLite, PostgreSQL): rows, the one door for status (a
 * compare-and-set in the event's transaction, also between two servers on one database),
 * follow-ups as rows (never stranded, never delivered twice), approvals decided once, and the
 * output log (group commit, chunk ids, pages, the counters in the agent's row).
 */
const stores = testStores();
afterAll(() => stores.close());

/** The agents' parts on one store (one server). */
async function side(store: Store) {
  const bus = await new EventBus(store.events).open();
  const records = new AgentRecords(store);
  return { store, bus, records, lifecycle: new AgentLifecycle(records, bus), messages: new AgentMessages(store), approvals: new AgentApprovals(store, bus) };
}
type Side = Awaited<ReturnType<typeof side>>;

let n = 0;
/** An agent row put straight into `status` (test set-up: the only write of status outside `transition`). */
async function agentIn(s: Side, status: AgentStatus, extra: { accountId?: string; parentAgentId?: string } = {}): Promise<string> {
  const id = `agent_s${++n}`;
  const now = Date.now();
  await s.records.insert({ id, alias: `alias-${n}`, provider: "fake", mode: "execute", permissionMode: "acceptEdits", prompt: "p", task: "t", workspacePath: "/nowhere", workspaceKind: "worktree", configDir: "/nowhere", createdAt: now, updatedAt: now, ...extra });
  const { agents } = s.store.t;
  await s.store.tx(async (tx) => void (await tx.update(agents).set({ status }).where(eq(agents.id, id))));
  return id;
}

const event = { type: "agent.status_changed", payload: { status: "running" } } as const;
const idle = { type: "agent.went_idle", payload: { result: null } } as const;
const settle = <T>(p: Promise<T>) => p.then((value) => ({ ok: true as const, value }), (err: unknown) => ({ ok: false as const, err: err as { code?: string } }));

/** Queue a follow-up the way the service does: with its event, in the event's transaction. */
function enqueue(s: Side, id: string, text: string) {
  return s.bus.publish("agent.message_queued", { messageId: "m", text, queued: 1 }, { agentId: id }, { write: async (tx) => void (await s.messages.enqueueIfLive(tx, id, text)) });
}

/** Move to idle only when no follow-up waits (the runner's `finished`). */
function finish(s: Side, id: string, expectedVersion?: number) {
  return s.lifecycle.transition(id, "finished", { ...(expectedVersion !== undefined ? { expectedVersion } : {}), event: idle, guard: (tx) => s.messages.assertNoneWaiting(tx, id) });
}

describe.each(STORE_KINDS)("the agents domain on %s", (kind) => {
  describe("rows", () => {
    it("finds by id or alias, refuses a taken alias without writing, and keeps the JSON columns typed", async () => {
      const s = await side(await stores.fresh(kind));
      const id = await agentIn(s, "starting", { accountId: "acct_1" });
      const row = await s.records.get(id);
      expect(await s.records.get(row.alias)).toMatchObject({ id, status: "starting", version: 0, workspaceRemoved: false });
      expect(await s.records.idOf(row.alias)).toBe(id);
      expect(await s.records.idOf("nobody", { lenient: true })).toBe("nobody");
      await expect(s.records.idOf("nobody")).rejects.toMatchObject({ code: "AGENT_NOT_FOUND" });
      await expect(s.records.get("nobody")).rejects.toMatchObject({ code: "AGENT_NOT_FOUND" });
      const now = Date.now();
      expect(await s.records.insert({ id: "agent_other", alias: row.alias, provider: "fake", mode: "execute", permissionMode: "ask", prompt: "p", task: "t", workspacePath: "/w", workspaceKind: "worktree", configDir: "/c", createdAt: now, updatedAt: now })).toBe(false);
      expect(await s.records.find("agent_other")).toBeUndefined();
      expect((await s.records.aliases()).has(row.alias)).toBe(true);
      const updated = await s.records.update(id, { pendingQuestions: [{ id: "q1", question: "why?" }], usageTotal: { inputTokens: 5, outputTokens: 7, costUsd: 0.5 }, workspaceRemoved: true, outputOffset: 5_000_000_000 });
      expect(updated).toMatchObject({ pendingQuestions: [{ id: "q1", question: "why?" }], usageTotal: { inputTokens: 5, outputTokens: 7, costUsd: 0.5 }, workspaceRemoved: true, outputOffset: 5_000_000_000, status: "starting", version: 0 });
      expect(await s.records.get(id)).toEqual(updated);
      await expect(s.records.update("nobody", { result: "x" })).rejects.toMatchObject({ code: "AGENT_NOT_FOUND" });
    });

    it("counts an account's active agents, and knows a tree's children and depth", async () => {
      const s = await side(await stores.fresh(kind));
      const root = await agentIn(s, "running", { accountId: "acct_1" });
      const child = await agentIn(s, "waiting_for_input", { accountId: "acct_1", parentAgentId: root });
      const grandchild = await agentIn(s, "idle", { accountId: "acct_1", parentAgentId: child });
      await agentIn(s, "starting", { accountId: "acct_2" });
      expect(await s.records.countOnAccount("acct_1", ["starting", "running", "waiting_for_input"])).toBe(2);
      expect(await s.records.countOnAccount("acct_3", ["running"])).toBe(0);
      expect((await s.records.childrenOf(root)).map((r) => r.id)).toEqual([child]);
      expect([await s.records.depthOf(root), await s.records.depthOf(child), await s.records.depthOf(grandchild)]).toEqual([0, 1, 2]);
      await s.records.remove(grandchild);
      expect(await s.records.find(grandchild)).toBeUndefined();
      s.bus.close();
    });
  });

  describe("the one door for status", () => {
    it("every (status, move) of the table: allowed moves write status + version + event together; others are refused and write nothing", async () => {
      const s = await side(await stores.fresh(kind));
      for (const from of AGENT_STATUSES_IN_TABLE) {
        for (const move of Object.keys(AGENT_MOVES) as AgentMove[]) {
          const id = await agentIn(s, from);
          const to = nextStatus(from, move);
          const attempt = settle(s.lifecycle.transition(id, move, { expectedVersion: 0, patch: { statusReason: "why" }, event }));
          const outcome = await attempt;
          const events = await s.bus.store.readAfter(0, { kind: "agent", id }, 10);
          if (to === null) {
            expect(outcome, `${from} ${move}`).toMatchObject({ ok: false, err: { code: "AGENT_TRANSITION_INVALID" } });
            expect(await s.records.get(id)).toMatchObject({ status: from, version: 0, statusReason: null });
            expect(events).toEqual([]);
            continue;
          }
          expect(outcome, `${from} ${move}`).toMatchObject({ ok: true, value: { status: to, version: 1, statusReason: "why" } });
          expect(await s.records.get(id)).toMatchObject({ status: to, version: 1, statusReason: "why" });
          expect(events.map((e) => e.type)).toEqual(["agent.status_changed"]);
        }
      }
      s.bus.close();
    });

    it("refuses a stale version, and a guard that throws, writing nothing; two moves from one read in one batch: exactly one wins", async () => {
      const s = await side(await stores.fresh(kind));
      const id = await agentIn(s, "running");
      await s.lifecycle.transition(id, "launched", { expectedVersion: 0, event });
      await expect(s.lifecycle.transition(id, "finished", { expectedVersion: 0, event })).rejects.toMatchObject({ code: "AGENT_VERSION_CONFLICT" });
      await expect(s.lifecycle.transition(id, "finished", { expectedVersion: 1, event, guard: async () => { throw new Error("no"); } })).rejects.toThrow("no");
      expect(await s.records.get(id)).toMatchObject({ status: "running", version: 1 });
      const results = await Promise.all([settle(s.lifecycle.transition(id, "finished", { expectedVersion: 1, event })), settle(s.lifecycle.transition(id, "stopped", { expectedVersion: 1, event }))]);
      expect(results.filter((r) => r.ok)).toHaveLength(1);
      expect(results.find((r) => !r.ok)).toMatchObject({ err: { code: "AGENT_VERSION_CONFLICT" } });
      expect((await s.records.get(id)).version).toBe(2);
      expect(await s.bus.store.readAfter(0, { kind: "agent", id }, 10)).toHaveLength(2);
      s.bus.close();
    });

    it("two servers on one database, 20 racers each moving one agent from the version they read: exactly one wins, one event", async () => {
      const store = await stores.fresh(kind);
      const a = await side(store);
      const b = await side(await stores.again(store));
      for (let round = 0; round < 5; round++) {
        const id = await agentIn(a, "running");
        const racers = [a, b].flatMap((s) =>
          Array.from({ length: 20 }, async (_, i) => {
            const seen = await s.records.get(id);
            return settle(s.lifecycle.transition(id, i % 2 ? "stopped" : "finished", { expectedVersion: seen.version, event }));
          }),
        );
        const outcomes = await Promise.all(racers);
        expect(outcomes.filter((o) => o.ok)).toHaveLength(1);
        for (const lost of outcomes.filter((o) => !o.ok)) expect(["AGENT_VERSION_CONFLICT", "AGENT_TRANSITION_INVALID"]).toContain(lost.err.code);
        expect((await a.records.get(id)).version).toBe(1);
        expect(await a.bus.store.readAfter(0, { kind: "agent", id }, 100)).toHaveLength(1);
      }
      a.bus.close();
      b.bus.close();
    });
  });

  describe("follow-ups as rows", () => {
    it("are queued only while the agent is live; idle is refused while one waits; delivered once, in order", async () => {
      const s = await side(await stores.fresh(kind));
      const id = await agentIn(s, "running");
      await enqueue(s, id, "first");
      await enqueue(s, id, "second");
      const waiting = await s.messages.undelivered(id);
      expect(waiting.map((m) => [m.seq, m.text])).toEqual([[1, "first"], [2, "second"]]);
      expect((await s.messages.queuedByAgent()).get(id)?.map((m) => m.text)).toEqual(["first", "second"]);
      await expect(finish(s, id)).rejects.toBeInstanceOf(UndeliveredFollowUps);
      expect((await s.records.get(id)).status).toBe("running");
      await s.lifecycle.transition(id, "launched", { event, also: (tx) => s.messages.markDelivered(tx, waiting.map((m) => m.id)) });
      expect(await s.messages.undelivered(id)).toEqual([]);
      await expect(s.store.tx((tx) => s.messages.markDelivered(tx, [waiting[0]!.id]))).rejects.toMatchObject({ code: "AGENT_FOLLOW_UPS_TAKEN" });
      await finish(s, id);
      await expect(enqueue(s, id, "late")).rejects.toBeInstanceOf(AgentNotLive);
      expect((await s.bus.store.readAfter(0, { kind: "agent", id }, 10)).map((e) => e.type)).toEqual(["agent.message_queued", "agent.message_queued", "agent.status_changed", "agent.went_idle"]);
      await s.messages.importLegacy(id, [{ id: "msg_legacy", text: "old", queuedAt: new Date(0).toISOString() }]);
      await s.messages.importLegacy(id, [{ id: "msg_legacy", text: "old", queuedAt: new Date(0).toISOString() }]);
      expect((await s.messages.undelivered(id)).map((m) => [m.seq, m.text])).toEqual([[3, "old"]]);
      await s.messages.forget(id);
      expect(await s.messages.queuedByAgent([id])).toEqual(new Map());
      s.bus.close();
    });

    it("two servers: a follow-up queued on one while the other moves the agent to idle is never stranded", async () => {
      const store = await stores.fresh(kind);
      const a = await side(store);
      const b = await side(await stores.again(store));
      const tally = { queuedFirst: 0, idleFirst: 0 };
      for (let round = 0; round < 30; round++) {
        const id = await agentIn(a, "running");
        const [finished, queued] = await Promise.all([settle(finish(a, id, 0)), settle(enqueue(b, id, `follow-up ${round}`))]);
        const row = await a.records.get(id);
        const waiting = await a.messages.undelivered(id);
        if (queued.ok) {
          expect(finished).toMatchObject({ ok: false, err: { code: "AGENT_FOLLOW_UPS_PENDING" } });
          expect([row.status, waiting.length]).toEqual(["running", 1]);
          tally.queuedFirst++;
        } else {
          expect(queued.err.code).toBe("AGENT_NOT_LIVE");
          expect(finished.ok).toBe(true);
          expect([row.status, waiting.length]).toEqual(["idle", 0]);
          tally.idleFirst++;
        }
      }
      console.log(`${kind}: follow-up vs idle on two servers: ${tally.queuedFirst} queued first, ${tally.idleFirst} idle first`);
      a.bus.close();
      b.bus.close();
    });
  });

  describe("approvals", () => {
    it("are decided once: of two servers deciding at once one wins; an expiry leaves a decided one alone", async () => {
      const store = await stores.fresh(kind);
      const a = await side(store);
      const b = await side(await stores.again(store));
      const id = await agentIn(a, "running");
      const decided = a.approvals.request(id, "Bash", { command: "ls" });
      // the request's row is written with its event
      let [pending] = await a.approvals.list({ agentId: id, status: "pending" });
      for (let i = 0; !pending && i < 100; i++) {
        await new Promise((r) => setTimeout(r, 10));
        [pending] = await a.approvals.list({ agentId: id, status: "pending" });
      }
      expect(pending).toMatchObject({ toolName: "Bash", input: { command: "ls" }, status: "pending" });
      expect(await a.approvals.pendingCounts()).toEqual(new Map([[id, 1]]));
      const outcomes = await Promise.all([settle(a.approvals.decide(pending!.id, { allow: true })), settle(b.approvals.decide(pending!.id, { allow: false, message: "no" }))]);
      expect(outcomes.filter((o) => o.ok)).toHaveLength(1);
      expect(outcomes.find((o) => !o.ok)).toMatchObject({ err: { code: "APPROVAL_NOT_PENDING" } });
      const [after] = await a.approvals.list({ agentId: id });
      expect(after!.status).toBe(outcomes[0]!.ok ? "allowed" : "denied");
      if (outcomes[0]!.ok) expect(await decided).toEqual({ behavior: "allow", updatedInput: { command: "ls" } });
      await a.approvals.expireFor(id, "the process ended");
      expect((await a.approvals.list({ agentId: id }))[0]!.status).toBe(after!.status);
      void a.approvals.request(id, "Edit", { file: "x" });
      await new Promise((r) => setTimeout(r, 50));
      await b.approvals.expireAll("restarted");
      expect((await a.approvals.list({ agentId: id })).map((x) => x.status).sort()).toEqual([after!.status, "expired"].sort());
      expect((await a.bus.store.readAfter(0, { kind: "agent", id }, 10)).map((e) => e.type)).toEqual(["agent.approval_requested", "agent.approval_decided", "agent.approval_requested", "agent.approval_decided"]);
      a.bus.close();
      b.bus.close();
    });
  });

  describe("the output log", () => {
    it("group-commits lines with the agent's counters, pages them, and keeps them (and their parser) after the agent is deleted", async () => {
      const s = await side(await stores.fresh(kind));
      const logs = agentLogStoreOf(s.store);
      const id = await agentIn(s, "running");
      const others = await Promise.all(Array.from({ length: 5 }, () => agentIn(s, "running")));
      // one event-loop turn: every agent's appends in one commit
      const [first, second, ...rest] = await Promise.all([
        logs.append(id, 1, ["a", "b", "c"], 100),
        logs.append(id, 1, ["d"], 200),
        ...others.map((o, i) => logs.append(o, 1, [`other ${i}`], 10 + i)),
      ]);
      expect(first).toEqual([{ chunkId: expect.any(Number), session: 1, fromLine: 0, lineCount: 3, bytes: 5 }]);
      expect(second).toEqual([{ chunkId: expect.any(Number), session: 1, fromLine: 3, lineCount: 1, bytes: 1 }]);
      expect(new Set([first![0]!.chunkId, second![0]!.chunkId, ...rest.map((r) => r[0]!.chunkId)]).size).toBe(7);
      // past 1000 lines a chunk ends; a note of session 2
      const many = await logs.append(id, 2, Array.from({ length: 2500 }, (_, i) => `line ${i}`), 5000);
      expect(many.map((c) => [c.fromLine, c.lineCount, c.session])).toEqual([[4, 1000, 2], [1004, 1000, 2], [2004, 500, 2]]);
      expect(await s.records.get(id)).toMatchObject({ lineCount: 2504, chunkSeq: 5, outputOffset: 5000 });
      await logs.append(id, 2, ["no offset"]);
      expect((await s.records.get(id)).outputOffset).toBe(5000);
      expect(await logs.totalLines(id)).toBe(2505);
      expect(await logs.sessions(id)).toEqual([{ session: 1, fromLine: 0, toLine: 4 }, { session: 2, fromLine: 4, toLine: 2505 }]);
      expect(await logs.readLines(id, 2, 4)).toEqual([
        { line: 2, session: 1, raw: "c" },
        { line: 3, session: 1, raw: "d" },
        { line: 4, session: 2, raw: "line 0" },
        { line: 5, session: 2, raw: "line 1" },
      ]);
      expect((await logs.readLines(id, 1003, 2)).map((l) => l.raw)).toEqual(["line 999", "line 1000"]);
      expect(await logs.chunk(many[1]!.chunkId)).toMatchObject({ agentId: id, session: 2, firstLine: 1004 });
      expect(await logs.chunk(999_999)).toBeUndefined();
      expect(await logs.providerOf(id)).toBe("fake");
      await s.records.remove(id);
      logs.forget(id);
      expect(await logs.providerOf(id)).toBe("fake");
      expect(await logs.totalLines(id)).toBe(2505);
      // a line written after the agent's row is gone still lands after the others
      expect(await logs.append(id, 3, ["late"])).toEqual([{ chunkId: expect.any(Number), session: 3, fromLine: 2505, lineCount: 1, bytes: 4 }]);
      expect(await logs.providerOf("agent_never")).toBe("claude");
      await logs.flush();
      s.bus.close();
    });

  });
});

// PostgreSQL only: on SQLite one server owns the file, so no two servers append at once
describe("the output log on postgres", () => {
  it("two servers appending to one agent's log at once: every line stored once, numbered without gaps; a NUL is stored as U+FFFD", async () => {
    const store = await stores.fresh("postgres");
    const a = await side(store);
    const b = await side(await stores.again(store));
    const id = await agentIn(a, "running");
    const [logsA, logsB] = [agentLogStoreOf(a.store), agentLogStoreOf(b.store)];
    const writes = Array.from({ length: 40 }, (_, i) => (i % 2 ? logsA : logsB).append(id, 1, [`${i}.1`, `${i}.2`], i));
    const refs = (await Promise.all(writes)).flat();
    expect(refs.map((r) => r.fromLine).sort((x, y) => x - y)).toEqual(Array.from({ length: 40 }, (_, i) => i * 2));
    const lines = await logsA.readLines(id, 0, 100);
    expect(lines.map((l) => l.line)).toEqual(Array.from({ length: 80 }, (_, i) => i));
    expect(new Set(lines.map((l) => l.raw)).size).toBe(80);
    expect(await a.records.get(id)).toMatchObject({ lineCount: 80, chunkSeq: 40 });
    const [nul] = await logsA.append(id, 1, ["before\u0000after"]);
    expect((await logsB.chunk(nul!.chunkId))?.lines).toEqual(["before\uFFFDafter"]);
    a.bus.close();
    b.bus.close();
  });
});
