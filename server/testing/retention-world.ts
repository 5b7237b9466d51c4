import { count, eq } from "drizzle-orm";
import type { EventScope } from "../../shared/events";
import type { AgentStatus, RunStatus } from "../../shared/statuses";
import type { Store } from "../db/store";
import type { EventBus } from "../events/bus";

/**
 * Test support for retention (server/db/retention.int.test.ts, `yard db prune`): rows of every
 * kind retention looks at, written straight into a store, and events published at a chosen time.
 */

export const DAY = 86_400_000;

/** A note on the bus as if published at `ts` (the bus stamps events with Date.now()). */
export function noteAt(bus: EventBus, ts: number, message: string, scope: EventScope = {}): Promise<number> {
  const realNow = Date.now;
  Date.now = () => ts;
  try {
    return bus.publish("system.noted", { message }, scope).then((e) => e.id);
  } finally {
    Date.now = realNow;
  }
}

export async function addRun(store: Store, id: string, status: RunStatus, at: number): Promise<void> {
  const ended = status !== "running" && status !== "pending";
  await store.tx(async (tx) => {
    await tx.insert(store.t.runs).values({ id, cwd: "/w", strategyName: "S", strategyPath: "/s.yaml", status, segment: 0, startedAt: at, completedAt: ended ? at : null });
  });
}

export async function addAgent(store: Store, id: string, status: AgentStatus, at: number): Promise<void> {
  await store.tx(async (tx) => {
    await tx.insert(store.t.agents).values({
      id,
      alias: `alias-${id}`,
      provider: "fake",
      status,
      mode: "execute",
      permissionMode: "bypass",
      prompt: "p",
      task: "t",
      workspacePath: `/w/${id}`,
      workspaceKind: "directory",
      configDir: `/c/${id}`,
      createdAt: at,
      updatedAt: at,
    });
  });
}

/** `n` chunks of output (10 bytes each) written at `at`, and the agent's provider row. */
export async function addOutput(store: Store, agentId: string, n: number, at: number): Promise<void> {
  const { agentLogChunks, agentLogs } = store.t;
  await store.tx(async (tx) => {
    await tx.insert(agentLogs).values({ agentId, provider: "fake" }).onConflictDoNothing();
    const [last] = await tx.select({ n: count() }).from(agentLogChunks).where(eq(agentLogChunks.agentId, agentId));
    const from = last?.n ?? 0;
    for (let i = from; i < from + n; i++) {
      await tx.insert(agentLogChunks).values({ agentId, session: 1, seq: i + 1, firstLine: i, lineCount: 1, bytes: 10, content: "0123456789", createdAt: at });
    }
  });
}

export async function addConversation(store: Store, id: string, toAgentId: string, status: "pending" | "answered", at: number): Promise<void> {
  await store.tx(async (tx) => {
    await tx.insert(store.t.conversations).values({ id, fromAgentId: "human", toAgentId, question: "q?", answer: status === "answered" ? "a" : null, status, createdAt: at, updatedAt: at });
  });
}

export async function addDaemon(store: Store, id: string, at: number): Promise<void> {
  await store.tx(async (tx) => {
    await tx.insert(store.t.daemons).values({ id, name: id, persistPath: `/d/${id}`, model: "mock/echo", status: "running", createdAt: at, updatedAt: at });
    await tx.insert(store.t.daemonQueue).values({ daemonId: id, seq: 1, enqueuedAt: new Date(at).toISOString(), payload: "{}", state: "pending" });
  });
}

/** Rows per table retention may touch (and the daemon queue, which it never does). */
export async function tableCounts(store: Store): Promise<Record<"events" | "runs" | "chunks" | "agentLogs" | "daemonQueue" | "conversations" | "agents", number>> {
  const t = store.t;
  const n = async (table: typeof t.events | typeof t.runs | typeof t.agentLogChunks | typeof t.agentLogs | typeof t.daemonQueue | typeof t.conversations | typeof t.agents) =>
    (await store.read.select({ n: count() }).from(table))[0]?.n ?? 0;
  return {
    events: await n(t.events),
    runs: await n(t.runs),
    chunks: await n(t.agentLogChunks),
    agentLogs: await n(t.agentLogs),
    daemonQueue: await n(t.daemonQueue),
    conversations: await n(t.conversations),
    agents: await n(t.agents),
  };
}

/** The ids of events of one scope, oldest first. */
export async function eventIdsOf(store: Store, scope: { runId?: string; agentId?: string; daemonId?: string; conversationId?: string } = {}): Promise<number[]> {
  const { events } = store.t;
  const column = scope.runId ? events.runId : scope.agentId ? events.agentId : scope.daemonId ? events.daemonId : scope.conversationId ? events.conversationId : undefined;
  const value = scope.runId ?? scope.agentId ?? scope.daemonId ?? scope.conversationId;
  const query = store.read.select({ id: events.id }).from(events);
  const rows = column && value ? await query.where(eq(column, value)).orderBy(events.id) : await query.orderBy(events.id);
  return rows.map((r) => r.id);
}

/**
 * A world with something of every kind, 40 days old unless said: runs (ended, running, one that
 * straddles the cutoff), agents (running, idle, waiting for input, a deleted one) with output and
 * events, conversations (pending, answered), a daemon with its queue, and a fresh newest event.
 * Returns what retention at 30 days must remove, and keep.
 */
export async function buildWorld(store: Store, bus: EventBus, now = Date.now()) {
  const old = now - 40 * DAY;
  const recent = now - DAY;
  await addRun(store, "run-old", "completed", old);
  await addRun(store, "run-live", "running", old);
  await addRun(store, "run-straddling", "completed", recent);
  await addAgent(store, "agent-live", "running", old);
  await addAgent(store, "agent-idle", "idle", old);
  await addAgent(store, "agent-waiting", "waiting_for_input", old);
  await addConversation(store, "conv-open", "agent-idle", "pending", old);
  await addConversation(store, "conv-done", "agent-idle", "answered", old);
  await addDaemon(store, "daemon-1", old);
  for (const id of ["agent-live", "agent-idle", "agent-waiting", "agent-deleted"]) await addOutput(store, id, 3, old);
  for (let i = 0; i < 4; i++) await noteAt(bus, old, `old run ${i}`, { runId: "run-old" });
  for (let i = 0; i < 3; i++) await noteAt(bus, old, `live run ${i}`, { runId: "run-live" });
  await noteAt(bus, old, "straddling run, early", { runId: "run-straddling" });
  for (const agentId of ["agent-live", "agent-idle", "agent-waiting", "agent-deleted"]) await noteAt(bus, old, `of ${agentId}`, { agentId });
  await noteAt(bus, old, "open question", { conversationId: "conv-open", agentId: "agent-idle" });
  await noteAt(bus, old, "answered question", { conversationId: "conv-done", agentId: "agent-idle" });
  await noteAt(bus, old, "daemon, old", { daemonId: "daemon-1" });
  await noteAt(bus, old, "server, old");
  await noteAt(bus, recent, "straddling run, late", { runId: "run-straddling" });
  await noteAt(bus, recent, "daemon, recent", { daemonId: "daemon-1" });
  const newest = await noteAt(bus, now, "newest");
  return {
    newest,
    /** At 30 days: run-old whole (4 events), agent-idle's and agent-deleted's events, the answered question's, the old daemon and server events. */
    removedEvents: 4 + 2 + 1 + 1 + 1,
    removedRuns: 1,
    /** agent-idle's and agent-deleted's output, 3 chunks of 10 bytes each. */
    removedOutput: { agents: 2, chunks: 6, bytes: 60 },
  };
}
