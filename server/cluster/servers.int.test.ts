import { execFileSync } from "node:child_process";
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createSwitchyardClient, type SwitchyardClient } from "../client";
import { makeRepo, waitForAgent } from "../testing/agents-world";
import { CommaClient } from "../testing/comma-client";
import { fakeAgentPrompt } from "../testing/fake-agent";
import { startFakeModelServer, type FakeModelServer } from "../testing/fake-model";
import { createTestDatabase, type TestDatabase } from "../testing/postgres";
import { removeHome, spawnServer, tempHome, type ServerProcess } from "../testing/server-harness";
import { killWorkerSessions, startYardWorker } from "../testing/yard-worker";

/**
 * Several servers on one PostgreSQL (issue 18 item 4), as real `yard start` processes: what one
 * does shows on the other, a run prepared on A starts on B, commands reaching a server that does
 * not own the run or daemon are carried out by the owner, and after a kill -9 of the owner another
 * server takes over within 15 s (a waiting run keeps waiting, a streaming one ends INTERRUPTED,
 * a daemon goes on with its durable queue).
 */
const KEY = "several-servers-test-secret-key-0123456789";
let pg: TestDatabase;
let fake: FakeModelServer;
let cwd: string;
const homes: string[] = [];
const procs: ServerProcess[] = [];

beforeAll(async () => {
  pg = await createTestDatabase();
  fake = await startFakeModelServer();
  cwd = tempHome("switchyard-servers-cwd-");
  mkdirSync(join(cwd, "strategies"));
  writeFileSync(
    join(cwd, "strategies", "wait.yaml"),
    `name: Wait\nversion: "1.0"\nagents:\n  writer: {model: anthropic/m, systemPrompt: "WRITER SAY[]"}\n  human: {type: user, config: {presetMessage: "Approve?"}}\n  finisher: {model: anthropic/m, systemPrompt: "FINISHER SAY[all done]"}\nflow: {type: sequential, steps: [{agent: writer}, {agent: human}, {agent: finisher}]}\n`,
  );
  writeFileSync(join(cwd, "strategies", "long.yaml"), `name: Long\nversion: "1.0"\nagents:\n  talker: {model: anthropic/m, systemPrompt: "LONG[100000] DELAY[5]"}\nflow: {type: sequential, steps: [{agent: talker}]}\n`);
});

afterAll(async () => {
  if (process.env.DEBUG_SERVERS) for (const p of procs) console.log(p.url, p.output());
  for (const p of procs) await p.kill("SIGKILL");
  await fake?.close();
  for (const h of homes) removeHome(h);
  removeHome(cwd);
  await pg?.drop();
});

async function server(home?: string): Promise<{ proc: ServerProcess; client: SwitchyardClient; home: string }> {
  const at = home ?? tempHome();
  if (!home) homes.push(at);
  const proc = await spawnServer({
    home: at,
    env: {
      SWITCHYARD_DATABASE_URL: pg.url,
      SWITCHYARD_SECRET_KEY: KEY,
      ANTHROPIC_BASE_URL: fake.url,
      ANTHROPIC_API_KEY: "k",
      SWITCHYARD_LOG_LEVEL: "warn",
      SWITCHYARD_AGENT_CLEANUP: "off",
      SWITCHYARD_AGENT_RESULT_GRACE_MS: "1500",
    },
  });
  procs.push(proc);
  return { proc, client: createSwitchyardClient({ url: proc.url }), home: at };
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
async function until<T>(what: string, read: () => Promise<T>, done: (v: T) => boolean, timeoutMs = 20_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const v = await read().catch((err: unknown) => err as T);
    if (done(v)) return v;
    if (Date.now() > deadline) throw new Error(`${what}: not in ${timeoutMs} ms; last: ${JSON.stringify(v instanceof Error ? v.message : v)}`);
    await sleep(100);
  }
}

describe("several servers on one PostgreSQL", () => {
  it("a run prepared on A starts on B, is answered through A and shows on both; stop and steer through B reach A's run", async () => {
    const a = await server();
    const b = await server();
    expect(a.proc.output()).not.toContain("SERVER_IN_USE");

    // both servers see each other
    const health = await until("two live servers", () => a.client.servers.list.query(), (l) => Array.isArray(l) && l.length === 2);
    expect(health.filter((s) => s.self)).toHaveLength(1);

    const { runId } = await a.client.runs.prepare.mutate({ strategyPath: "strategies/wait.yaml", cwd });
    await b.client.runs.start.mutate({ runId, input: "go" });
    // B owns it; A shows it waiting, with the request (from the timeline)
    const waiting = await until("waiting on A", () => a.client.runs.get.query({ runId }), (r) => (r as { pendingRequests?: unknown[] }).pendingRequests?.length === 1);
    const request = waiting.pendingRequests[0]!;
    expect(request.kind).toBe("input");
    // answered through A: forwarded to B, the owner
    await a.client.runs.respond.mutate({ runId, requestId: request.requestId, text: "approved" });
    const done = await until("completed", () => a.client.runs.get.query({ runId }), (r) => (r as { status?: string }).status === "completed");
    expect(done.result).toContain("all done");
    expect((await b.client.runs.get.query({ runId })).status).toBe("completed");

    // a streaming run on A, steered and stopped through B
    const long = await a.client.runs.prepare.mutate({ strategyPath: "strategies/long.yaml", cwd });
    await a.client.runs.start.mutate({ runId: long.runId, input: "talk" });
    await until("A streams", () => b.client.runs.get.query({ runId: long.runId }), (r) => (r as { status?: string }).status === "running");
    await b.client.runs.steer.mutate({ runId: long.runId, text: "shorter please" });
    await b.client.runs.stop.mutate({ runId: long.runId });
    const stopped = await until("cancelled", () => a.client.runs.get.query({ runId: long.runId }), (r) => (r as { status?: string }).status === "cancelled");
    expect(stopped.error?.code).toBe("CANCELLED");
    const steered = await a.client.runs.timeline.query({ runId: long.runId });
    expect(steered.events.some((e) => e.type === "run.steer_queued")).toBe(true);

    // a Comma client on B sees a run A starts, live
    const comma = await CommaClient.connect(b.proc.url);
    const next = await a.client.runs.prepare.mutate({ strategyPath: "strategies/wait.yaml", cwd });
    comma.send({ type: "subscribe", runId: next.runId });
    await sleep(300);
    await a.client.runs.start.mutate({ runId: next.runId, input: "go" });
    const asked = await comma.waitFor((f) => f.runId === next.runId && f.type === "request_input").catch((err: Error) => {
      throw new Error(`${err.message}: ${JSON.stringify(comma.frames)}`);
    });
    // and answers it there (user_input on B, the run on A)
    comma.send({ type: "user_input", runId: next.runId, agentName: asked.agentName as string, text: "yes" });
    await comma.waitFor((f) => f.runId === next.runId && f.type === "strategy_completed");
    comma.close();
  }, 90_000);

  it("kill -9 of the owner: another server takes over within 15 s; a waiting run keeps waiting, a streaming one ends INTERRUPTED, a daemon goes on", async () => {
    const a = await server();
    const b = await server();

    const waiting = await a.client.runs.prepare.mutate({ strategyPath: "strategies/wait.yaml", cwd });
    await a.client.runs.start.mutate({ runId: waiting.runId, input: "go" });
    await until("waiting", () => a.client.runs.get.query({ runId: waiting.runId }), (r) => (r as { pendingRequests?: unknown[] }).pendingRequests?.length === 1);
    const streaming = await a.client.runs.prepare.mutate({ strategyPath: "strategies/long.yaml", cwd });
    await a.client.runs.start.mutate({ runId: streaming.runId, input: "talk" });

    const daemon = await a.client.daemons.spawn.mutate({ task: "Acknowledge each trigger.", model: "anthropic/claude-daemon", eventQueueCapacity: 100 });
    // triggers through B go to A's daemon queue
    for (let i = 0; i < 5; i++) await b.client.daemons.trigger.mutate({ id: daemon.id, payload: { n: i } });
    await sleep(500);

    const killedAt = Date.now();
    await a.proc.kill("SIGKILL");

    // the waiting run stays waiting, now on B, and B answers it
    const still = await until(
      "B took the waiting run",
      () => b.client.runs.get.query({ runId: waiting.runId }),
      (r) => (r as { status?: string }).status === "running" && (r as { pendingRequests?: unknown[] }).pendingRequests?.length === 1,
      20_000,
    );
    const interrupted = await until("B interrupted the streaming run", () => b.client.runs.get.query({ runId: streaming.runId }), (r) => (r as { status?: string }).status === "error", 20_000);
    const tookMs = Date.now() - killedAt;
    expect(interrupted.error?.code).toBe("INTERRUPTED");
    expect(tookMs).toBeLessThan(20_000);
    await b.client.runs.respond.mutate({ runId: waiting.runId, requestId: still.pendingRequests[0]!.requestId, text: "approved" });
    await until("completed on B", () => b.client.runs.get.query({ runId: waiting.runId }), (r) => (r as { status?: string }).status === "completed");

    // the daemon runs on B now: a new trigger is taken and handled, after the ones before it
    await until("daemon on B", () => b.client.daemons.snapshot.query({ id: daemon.id }), (s) => (s as { status?: string }).status === "running");
    const { seq } = await b.client.daemons.trigger.mutate({ id: daemon.id, payload: { n: 5 } });
    expect(seq).toBeGreaterThanOrEqual(5);
    type Listed = { events?: Array<{ type: string; payload: { seq?: number } }> };
    const seqsOf = (l: Listed) => (l.events ?? []).filter((e) => e.type === "daemon.turn_completed" && e.payload.seq !== undefined).map((e) => e.payload.seq!);
    const handled = await until(
      "every trigger handled",
      () => b.client.events.list.query({ afterId: 0, limit: 5000, scope: { kind: "daemon", id: daemon.id } }),
      (l) => [0, 1, 2, 3, 4, 5].every((n) => seqsOf(l as Listed).includes(n)),
      30_000,
    );
    // in order (at-least-once: the one in flight at the kill may come twice, never out of order)
    const seqs = seqsOf(handled as Listed);
    expect(seqs).toEqual([...seqs].sort((x, y) => x - y));
  }, 120_000);

  it("a paused owner (SIGSTOP past its lease) that wakes after B took over writes nothing: no event of its run after the INTERRUPTED end, no line of its agent twice", async () => {
    const a = await server();
    const b = await server();
    const streaming = await a.client.runs.prepare.mutate({ strategyPath: "strategies/long.yaml", cwd });
    await a.client.runs.start.mutate({ runId: streaming.runId, input: "talk" });
    const repo = makeRepo();
    homes.push(repo);
    const agent = await a.client.agents.spawn.mutate({
      provider: "fake",
      repo,
      prompt: fakeAgentPrompt("count", [{ text: "hello from A" }, { lines: { count: 500, perSecond: 25 } }, { done: "counted" }]),
    });
    type Listed = { events?: Array<{ id: number; type: string; payload: { status?: string; error?: { code?: string } } }> };
    const runEvents = async () => ((await b.client.events.list.query({ afterId: 0, limit: 5000, scope: { kind: "run", id: streaming.runId } })) as Listed).events ?? [];
    await until("A streams", runEvents, (e) => Array.isArray(e) && e.filter((x) => x.type === "run.agent_streamed").length > 5);
    await until("A's agent writes", () => b.client.agents.output.query({ agentId: agent.id, limit: 100 }), (o) => (o as { lines?: unknown[] }).lines !== undefined && o.lines.length > 10);

    // A stops dead (a long pause, a frozen VM) while its model stream and its agent go on writing
    a.proc.proc.kill("SIGSTOP");
    const ended = await until("B interrupted A's run", runEvents, (e) => Array.isArray(e) && e.some((x) => x.type === "run.completed"), 30_000);
    const end = ended.find((x) => x.type === "run.completed")!;
    expect(end.payload.error?.code).toBe("INTERRUPTED");
    // B watches the agent now (it took the lease over): give it a moment to tail, then wake A
    await sleep(1000);
    a.proc.proc.kill("SIGCONT");

    // A wakes with its stream, its tail and its timers all due: whatever it still writes is refused
    const done = await waitForAgent(b.client, agent.id, ["idle", "crashed", "stopped"], 60_000);
    expect(done.status, done.statusReason ?? "").toBe("idle");
    // A goes on without them (paused inside a transaction, which PostgreSQL ended after
    // IDLE_IN_TRANSACTION_MS, its dead connection is survived too: connection-loss.ts)
    await until("A noticed it lost them", async () => a.proc.output(), (o) => typeof o === "string" && o.includes("another server took over what this server owned"), 15_000);
    await sleep(2000);
    const after = (await runEvents()).filter((x) => x.id > end.id);
    expect(after.map((x) => x.type)).toEqual([]);
    const out = await b.client.agents.output.query({ agentId: agent.id, fromLine: 0, limit: 5000, format: "raw" });
    const numbered = out.lines.map((l) => /line (\d+)/.exec(l.raw ?? "")?.[1]).filter((n): n is string => n !== undefined);
    expect(numbered.length - new Set(numbered).size).toBe(0);
    expect(new Set(numbered).size).toBeGreaterThanOrEqual(500);
    // A is well and serves again
    expect(a.proc.proc.exitCode, a.proc.output()).toBeNull();
    expect((await a.client.health.query()).status).toBe("ok");
  }, 150_000);

  it("an agent spawned through A streams live on B; after kill -9 of A, B watches it to the end: every line once", async () => {
    const a = await server();
    const b = await server();
    const repo = makeRepo();
    homes.push(repo);
    const agent = await a.client.agents.spawn.mutate({
      provider: "fake",
      repo,
      prompt: fakeAgentPrompt("count", [{ text: "hello from A" }, { lines: { count: 300, perSecond: 25 } }, { done: "counted" }]),
    });
    // B sees its output while it runs on A
    const live = await until(
      "output on B while it runs",
      async () => ({ out: await b.client.agents.output.query({ agentId: agent.id, limit: 1000 }), info: await b.client.agents.get.query({ agentId: agent.id }) }),
      (v) => (v as { out?: { lines: unknown[] } }).out !== undefined && v.out.lines.length > 20 && v.info.status === "running",
    );
    expect(live.info.status).toBe("running");

    await a.proc.kill("SIGKILL");
    // the process lives on (detached); B takes over watching it once A's lease expires
    const done = await waitForAgent(b.client, agent.id, ["idle", "crashed", "stopped"], 60_000);
    expect(done.status, done.statusReason ?? "").toBe("idle");
    const out = await b.client.agents.output.query({ agentId: agent.id, fromLine: 0, limit: 5000, format: "raw" });
    const numbered = out.lines.map((l) => /line (\d+)/.exec(l.raw ?? "")?.[1]).filter((n): n is string => n !== undefined);
    expect(new Set(numbered).size).toBe(numbered.length);
    expect(numbered.length).toBeGreaterThanOrEqual(300);
  }, 120_000);

  it("an agent on A: its tool approval decided through B lets it go on; a stop through B stops its process on A", async () => {
    const a = await server();
    const b = await server();
    const repo = makeRepo();
    homes.push(repo);
    const agent = await a.client.agents.spawn.mutate({
      provider: "fake",
      repo,
      permissionMode: "ask",
      prompt: fakeAgentPrompt("approve then count", [
        { permission: { tool: "Bash", input: { command: "echo ok > approved.txt" } } },
        { text: "approved, going on" },
        { lines: { count: 100_000, perSecond: 20 } },
        { done: "never" },
      ]),
    });
    const [approval] = await until("a pending approval on B", () => b.client.agents.approvals.query({ agentId: agent.id, status: "pending" }), (l) => Array.isArray(l) && l.length === 1);
    await b.client.agents.decide.mutate({ approvalId: approval!.id, allow: true });
    // the CLI waiting on A's permission endpoint got the decision made on B
    await until(
      "going on after the approval",
      () => b.client.agents.output.query({ agentId: agent.id, limit: 200, format: "raw" }),
      (o) => (o as { lines?: Array<{ raw?: string }> }).lines?.some((l) => (l.raw ?? "").includes("approved, going on")) === true,
    );
    const running = await b.client.agents.get.query({ agentId: agent.id });
    expect(running.status).toBe("running");
    expect(running.pid).toBeGreaterThan(0);

    const stopped = await b.client.agents.stop.mutate({ agentId: agent.id });
    expect(stopped.status).toBe("stopped");
    // its process on A is gone (stopped there, not only marked)
    await until("the process ended", async () => {
      try {
        process.kill(running.pid!, 0);
        return false;
      } catch {
        return true;
      }
    }, (gone) => gone === true, 15_000);
  }, 90_000);

  it("a second server on the same data dir is refused while the first runs", async () => {
    const a = await server();
    await expect(server(a.home)).rejects.toThrow(/SERVER_IN_USE|data dir of its own/);
  }, 60_000);

  // last: once a worker is registered, every spawn of the database goes to workers
  it("a spawn through A goes to a worker connected to B: queued on A, claimed and started by B; a follow-up through A reaches its session", async () => {
    const a = await server();
    const b = await server();
    const repo = makeRepo();
    homes.push(repo);
    const { token } = await a.client.workers.createToken.mutate({ name: "wb" });
    const worker = await startYardWorker(b.proc.url, token, "wb", { capacity: 2 });
    try {
      // A sees it connected, to B
      const seen = await until("wb connected, seen from A", () => a.client.workers.get.query({ name: "wb" }), (w) => (w as { state?: string }).state === "connected");
      expect(seen.server).toBe(b.proc.url);
      const spawned = await a.client.agents.spawn.mutate({
        provider: "fake",
        repo,
        prompt: fakeAgentPrompt("through A", {
          steps: [{ text: "hello from wb" }, { write: { path: "first.md", content: "first\n" } }, { bash: "git add -A && git commit -q -m first" }, { done: "first done" }],
          resume: [[{ write: { path: "second.md", content: "second\n" } }, { bash: "git add -A && git commit -q -m second" }, { done: "second done" }]],
        }),
      });
      // not connected to A: queued there with why, then claimed by B, which its worker is connected to
      expect(spawned.status).toBe("queued");
      expect(spawned.statusReason).toMatch(/wb is not connected to this server/);
      const done = await waitForAgent(a.client, spawned.id, ["idle", "crashed", "stopped"], 60_000);
      expect(done.status, done.statusReason ?? "").toBe("idle");
      expect(done.worker).toBe("wb");
      expect(done.workspacePath.startsWith(worker.home)).toBe(true);
      expect(JSON.stringify((await a.client.agents.output.query({ agentId: spawned.id, limit: 100 })).lines)).toContain("hello from wb");
      // its branch went back through B's git endpoint into the repository both servers share
      expect(execFileSync("git", ["show", `switchyard/${done.alias}:first.md`], { cwd: repo }).toString()).toBe("first\n");
      // a follow-up sent through A: B delivers it to the worker's session
      await a.client.agents.message.mutate({ agentId: spawned.id, text: "go on" });
      await until("the follow-up's commit", async () => execFileSync("git", ["ls-tree", "--name-only", `switchyard/${done.alias}`], { cwd: repo }).toString(), (t) => String(t).includes("second.md"), 60_000);
      const after = await waitForAgent(b.client, spawned.id, ["idle", "crashed", "stopped"], 60_000);
      expect(after.status, after.statusReason ?? "").toBe("idle");
      expect(after.result).toContain("second done");
    } finally {
      worker.proc.kill("SIGKILL");
      await worker.exited;
      killWorkerSessions(worker.home);
      removeHome(worker.home);
    }
  }, 150_000);
});
