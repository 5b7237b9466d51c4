import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Strategy } from "../../shared/strategy";
import { AccountsService } from "../accounts/accounts.service";
import { AgentApprovals } from "../agents/agent-approvals";
import { AgentLifecycle } from "../agents/agent-lifecycle";
import { AgentMessages } from "../agents/agent-messages";
import { AgentRecords } from "../agents/agent-records";
import { AgentLogStore } from "../agents/log-store";
import { createDaemonQueueStorage } from "../daemons/queue-store";
import { EventBus } from "../events/bus";
import { createLogger } from "../log";
import { REPO_ROOT } from "../paths";
import { RunLifecycle } from "../runs/run-lifecycle";
import { RunState, type PolicyPort } from "../runs/run-state";
import { openSqliteStore, type SqliteStore as EmbeddedStore } from "../db/sqlite-store";
import type { Store } from "../db/store";

/**
 * Test support for copy.int.test.ts: a SQLite store written by the real server code (the bus, the
 * run and agent lifecycles, the log, queue, approval and account stores), with every table holding
 * rows and awkward values (unicode, quotes, NUL inside JSON, a 1 MB log line, booleans, floats, nulls).
 */

/** Text any column takes (PostgreSQL text holds everything but NUL). */
export const AWKWARD = `emoji 🚀, accents é, CJK 漢字, quotes ' " \\ \`, newline\nand tab\t`;
/** Inside JSON a NUL is the escape \u0000: fine in text columns (jsonb would refuse it). */
export const AWKWARD_JSON = `${AWKWARD}, NUL \u0000`;

export type SqliteStore = { dir: string; path: string; remove(): void };

export async function buildSqliteStore(options: { events?: number } = {}): Promise<SqliteStore> {
  const dir = mkdtempSync(join(tmpdir(), "switchyard-copy-"));
  const path = join(dir, "switchyard.db");
  const store = openSqliteStore({ path, migrationsDir: join(REPO_ROOT, "drizzle") });
  const bus = new EventBus(store.events);
  const now = Date.now();
  const remove = () => rmSync(dir, { recursive: true, force: true });
  try {
    await writeEvents(bus, options.events ?? 0);
    await writeRuns(store, bus);
    await writeAgents(store, bus, now);
    await writeDaemons(store, now);
    await writeConversations(store, now);
    await writeCluster(store, now);
    await writeAccounts(store, bus, join(dir, "home"), now);
  } catch (err) {
    await store.close();
    remove();
    throw err;
  }
  bus.close();
  await store.close();
  return { dir, path, remove };
}

/** The bus, with every scope and odd payloads, plus `bulk` more. */
async function writeEvents(bus: EventBus, bulk: number): Promise<void> {
  await bus.publish("system.noted", { message: AWKWARD_JSON });
  await bus.publish("system.noted", { message: "y".repeat(10_000) }, { conversationId: "conv_1" });
  for (let i = 0; i < bulk; i += 1000) {
    await Promise.all(Array.from({ length: Math.min(1000, bulk - i) }, (_, k) => bus.publish("system.noted", { message: `bulk ${i + k}` }, k % 3 === 0 ? { daemonId: "daemon_1" } : {})));
  }
}

/** Runs through the one door, usage and cost with the end. */
async function writeRuns(store: Store, bus: EventBus): Promise<void> {
  const strategy = Strategy.parse({ name: "Copy", version: "1.0", agents: { a: { model: "anthropic/m" } }, flow: { type: "sequential", steps: [{ agent: "a" }] } });
  const policy: PolicyPort = { update: () => {}, remember: () => {}, toJSON: () => ({}) };
  const runs = new RunLifecycle(store, bus);
  const done = new RunState({ runId: "run_done", strategy, strategyPath: "/s/copy.yaml", cwd: "/work/é" }, bus, policy);
  await runs.transition(done, { event: "start", input: AWKWARD });
  done.addUsage({ promptTokens: 123_456, completionTokens: 7_890 });
  done.spend(131_346, 0.1 + 0.2);
  await runs.transition(done, { event: "complete", result: "done 🚀" });
  const failed = new RunState({ runId: "run_failed", strategy, strategyPath: "/s/copy.yaml", cwd: "/work" }, bus, policy);
  await runs.transition(failed, { event: "start", input: "x" });
  await runs.transition(failed, { event: "fail", error: { code: "EXECUTION_ERROR", message: "it broke: 'quoted'" } });
}

/**
 * One agent through the records, the lifecycle, follow-ups, the log store and approvals; one with
 * every column set (what a long-lived agent accumulates), written directly.
 */
async function writeAgents(store: EmbeddedStore, bus: EventBus, now: number): Promise<void> {
  const records = new AgentRecords(store);
  await records.insert({ id: "agent_live", alias: "live-one", provider: "fake", mode: "execute", permissionMode: "ask", prompt: AWKWARD, task: "t", workspacePath: "/w/live", workspaceKind: "worktree", configDir: "/c", createdAt: now, updatedAt: now });
  await new AgentLifecycle(records, bus).transition("agent_live", "launched", { event: { type: "agent.status_changed", payload: { status: "running" } } });
  const messages = new AgentMessages(store);
  await store.tx(async (tx) => {
    await messages.enqueueIfLive(tx, "agent_live", "first follow-up");
    await messages.markDelivered(tx, [(await messages.enqueueIfLive(tx, "agent_live", "second, delivered")).id]);
  });
  const logs = new AgentLogStore(store);
  await logs.append("agent_live", 1, ['{"type":"system"}', `{"type":"assistant","text":${JSON.stringify(AWKWARD_JSON)}}`], 4096);
  await logs.append("agent_live", 1, Array.from({ length: 50 }, (_, i) => `{"line":${i}}`), 8192);
  await logs.append("agent_live", 2, [`{"big":"${"x".repeat(1024 * 1024)}"}`], 1_100_000);
  const approvals = new AgentApprovals(store, bus);
  void approvals.request("agent_live", "Bash", { command: "rm -rf /tmp/x" });
  void approvals.request("agent_live", "Edit", { file: "a.ts" });
  await new Promise((r) => setTimeout(r, 20));
  const [first] = await approvals.list({ agentId: "agent_live" });
  await approvals.decide(first!.id, { allow: false, message: "not that" });
  await store.tx(async (tx) => {
    await tx.insert(store.t.agents).values({
      id: "agent_full", alias: "full-one", provider: "claude", status: "idle", version: 7, statusReason: "done", mode: "review", permissionMode: "bypass", prompt: "p", task: "t",
      model: "claude-x", repoPath: "/repo", baseRef: "main", baseCommit: "abc123", branch: "yard/full", workspacePath: "/w/full", workspaceKind: "directory", workspaceRemoved: true,
      configDir: "/c2", sessionId: "sess-1", sessionNumber: 3, pid: 4_194_303, pidStart: "123456789", outputPath: "/o.jsonl", outputOffset: 5_000_000_000, lineCount: 1234, chunkSeq: 56,
      result: "result", pendingQuestions: '[{"id":"q1","question":"why?"}]', queuedMessages: "[]", usageTotal: '{"inputTokens":10,"outputTokens":20}', usageSession: "{}",
      missingSignalRetries: 2, exitCode: -1, taskId: "task-1", phaseId: "phase-1", initiativeId: "init-1", accountId: "acct", runPrompt: "again", runResumed: true, commitRequests: 1,
      cleanupWarning: "dirty", runReason: "message", diskBytes: 9_007_199_254_740_991, diskCheckedAt: now, mergedInto: "main", mergeStrategy: "squash", mergeCommit: "def456",
      mergedHead: "0123abc", mergedAt: now, createdAt: 1, updatedAt: now, finishedAt: now,
    });
  });
}

/** Daemon rows and their durable queue (pending, inflight, done). */
async function writeDaemons(store: Store, now: number): Promise<void> {
  const { daemons } = store.t;
  await store.tx(async (tx) => {
    await tx.insert(daemons).values({ id: "daemon_1", name: "watcher", persistPath: "/d/watcher", model: "mock/echo", status: "running", loopStatus: null, error: null, createdAt: now, updatedAt: now });
    await tx.insert(daemons).values({ id: "daemon_2", name: "failed", persistPath: "/d/failed", model: "mock/echo", status: "failed", loopStatus: "budget_exhausted", error: AWKWARD, createdAt: now, updatedAt: now });
  });
  const queue = createDaemonQueueStorage(store);
  await Promise.all([1, 2, 3].map((seq) => queue.insert({ daemonId: "daemon_1", seq, enqueuedAt: new Date(now + seq).toISOString(), payloadJson: JSON.stringify({ seq, text: AWKWARD_JSON }) })));
  await queue.setState("daemon_1", 1, "done");
  await queue.setState("daemon_1", 2, "inflight");
}

async function writeConversations(store: Store, now: number): Promise<void> {
  const { conversations } = store.t;
  await store.tx(async (tx) => {
    await tx.insert(conversations).values({ id: "conv_1", fromAgentId: "agent_live", toAgentId: "human", question: "Ship it?", status: "pending", createdAt: now, updatedAt: now });
    await tx
      .insert(conversations)
      .values({ id: "conv_2", fromAgentId: "agent_full", toAgentId: "agent_live", initiativeId: "i", phaseId: "p", taskId: "t", question: "Port?", answer: "8080", status: "answered", createdAt: now, updatedAt: now + 1 });
  });
}

/** The cluster's rows (a server, its leases, a command, a worker) and a prepared run, as the cluster and runs code write them. */
async function writeCluster(store: Store, now: number): Promise<void> {
  const { servers, leases, serverCommands, preparedRuns, workers } = store.t;
  await store.tx(async (tx) => {
    await tx.insert(servers).values({ id: "srv_1", url: "http://127.0.0.1:7422", hostname: "host-é", pid: 4242, version: "0.1.0", startedAt: now, heartbeatAt: now + 2_000, stoppedAt: null });
    await tx.insert(leases).values({ kind: "run", entityId: "run_live", serverId: "srv_1", epoch: 3, expiresAt: now + 10_000 });
    await tx.insert(leases).values({ kind: "daemon", entityId: "daemon_1", serverId: "srv_1", epoch: 1, expiresAt: now + 10_000 });
    await tx.insert(serverCommands).values({ id: "cmd_1", serverId: "srv_1", fromServerId: "srv_2", op: "run.steer", payload: JSON.stringify({ runId: "run_live", text: AWKWARD_JSON }), status: "done", result: null, createdAt: now, doneAt: now + 5 });
    await tx.insert(workers).values({
      name: "build-2",
      tokenHash: "ab".repeat(32),
      revokedAt: null,
      drained: true,
      capabilities: JSON.stringify({ version: "0.1.0", hostname: "host-é", home: "/w/home", capacity: 8, labels: ["gpu"], providers: [{ name: "fake", command: "/usr/bin/node", version: null }], diskFree: 2 ** 40, serverUrl: "http://10.0.0.1:7422" }),
      serverId: "srv_1",
      epoch: 7,
      connectedAt: now,
      heartbeatAt: now + 1_000,
      lostAt: null,
      createdAt: now - 60_000,
    });
    await tx.insert(preparedRuns).values({ runId: "run_prepared", input: JSON.stringify({ strategyPath: "/s/demo.yaml", cwd: "/w", modelOverride: AWKWARD }), serverId: "srv_1", createdAt: now });
  });
}

/** Accounts sealed by the accounts service: an API key, and an exhausted OAuth login. */
async function writeAccounts(store: Store, bus: EventBus, home: string, now: number): Promise<void> {
  const log = createLogger({ level: "silent", redact: (s) => s });
  const accounts = new AccountsService({
    store, bus, log, home, cooldownMs: 60_000, claudeOAuth: { tokenUrl: "http://127.0.0.1:9/unused", clientId: "c" }, addSecret: () => {}, activeAgentsOf: () => 0,
  });
  await accounts.add({ provider: "claude", label: "work", secret: "sk-ant-secret-1234" });
  const oauth = await accounts.add({ provider: "claude", label: "personal", email: "me@example.com", kind: "oauth", secret: "oauth-access-5678", refreshToken: "refresh-9999", expiresAt: now + 3_600_000 });
  await accounts.markExhausted(oauth.id, now + 60_000, "usage limit");
  await accounts.close();
}
