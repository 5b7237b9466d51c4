import { existsSync, readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { AgentInfo } from "../../shared/agents";
import { startAgentsWorld, waitForAgent, type AgentsWorld } from "../testing/agents-world";
import { storeContents, TEST_STORE } from "../testing/server-harness";
import { fakeAgentPrompt } from "../testing/fake-agent";
import { fakeReply, type FakeReplyInput, type RecordedRequest } from "../testing/fake-model";

/**
 * Account failover with the REAL `claude` CLI against the fake model, which tells the two
 * API-key accounts apart by the key each request carries; and with the fake agent, whose adapter
 * takes accounts too (provider "fake": Claude's config dir and credentials).
 */

let w: AgentsWorld;
const KEY_A = "sk-ant-account-a-0001";
const KEY_B = "sk-ant-account-b-0002";
const RESET_EPOCH = 1893456000; // 2030-01-01T00:00:00Z

beforeAll(async () => {
  w = await startAgentsWorld({ env: { SWITCHYARD_ACCOUNT_COOLDOWN_MS: "120000" } });
});
afterAll(async () => {
  w.fake.setHandler(undefined);
  await w?.stop();
});

const SIGNAL_RE = /(\/[^\s"`\\]+)\/\.switchyard\/output\/signal\.json/;
const isMain = (req: RecordedRequest) => req.api === "anthropic" && req.script.offeredTools.includes("Write");

/** Key B: writes the done signal, then says so. */
function serveWithB(req: RecordedRequest, turns: Map<string, number>): FakeReplyInput | undefined {
  if (!isMain(req)) return undefined;
  const m = SIGNAL_RE.exec(JSON.stringify(req.body));
  if (!m) return "No signal path.";
  const n = (turns.get(m[1]!) ?? 0) + 1;
  turns.set(m[1]!, n);
  if (n === 1) return { kind: "turn", text: "Finishing.", toolCalls: [{ name: "Write", input: { file_path: join(m[1]!, ".switchyard", "output", "signal.json"), content: JSON.stringify({ status: "done", result: { message: "done on B" } }) } }] };
  return "Done.";
}

async function addAccounts(suffix: string): Promise<void> {
  for (const a of await w.t.client.accounts.list.query()) await w.t.client.accounts.remove.mutate({ account: a.id, force: true });
  await w.t.client.accounts.add.mutate({ provider: "claude", label: `a-${suffix}`, kind: "api-key", secret: `${KEY_A}${suffix}` });
  await w.t.client.accounts.add.mutate({ provider: "claude", label: `b-${suffix}`, kind: "api-key", secret: `${KEY_B}${suffix}` });
}

function textOf(req: RecordedRequest): string {
  return JSON.stringify(req.body.messages ?? []);
}

async function eventsOf(agentId: string) {
  const page = await w.t.client.events.list.query({ scope: { kind: "agent", id: agentId }, limit: 500 });
  return page.events as Array<{ type: string; payload: Record<string, unknown> }>;
}

describe("account failover (real claude)", () => {
  it("a 429 with an announced reset exhausts account A until then; B resumes the same session", async () => {
    await addAccounts("1");
    const turns = new Map<string, number>();
    w.fake.setHandler((req) => {
      if (req.apiKey === `${KEY_A}1`) {
        return fakeReply.httpError(429, { message: `Claude AI usage limit reached|${RESET_EPOCH}`, headers: { "x-should-retry": "false" } });
      }
      return req.apiKey === `${KEY_B}1` ? serveWithB(req, turns) : "unknown key";
    });
    const spawned = await w.t.client.agents.spawn.mutate({ provider: "claude", repo: w.repo, prompt: "FAILOVER_TASK_ONE: finish", account: "a-1" });
    const done = await waitForAgent(w.t.client, spawned.id, ["idle", "crashed", "waiting_for_account", "stopped"], 120_000);
    expect(done.status, done.statusReason ?? "").toBe("idle");
    expect(done.result).toBe("done on B");
    expect(done.accountLabel).toBe("b-1");

    const a = await w.t.client.accounts.get.query({ account: "a-1" });
    expect(a.status).toBe("exhausted");
    expect(a.exhaustedUntil).toBe(new Date(RESET_EPOCH * 1000).toISOString());
    expect((await w.t.client.accounts.get.query({ account: "b-1" })).status).toBe("available");

    const mainA = w.fake.requests.filter((r) => isMain(r) && r.apiKey === `${KEY_A}1`);
    const mainB = w.fake.requests.filter((r) => isMain(r) && r.apiKey === `${KEY_B}1`);
    expect(mainA.length).toBeGreaterThanOrEqual(1);
    // the same session: B's first request carries A's conversation (the original task) plus the retry
    expect(textOf(mainB[0]!)).toContain("FAILOVER_TASK_ONE");
    expect(textOf(mainB[0]!)).toContain("A usage limit interrupted your last turn");
    expect(done.sessionId).not.toBeNull();
    const events = await eventsOf(spawned.id);
    const switched = events.find((e) => e.type === "agent.account_switched");
    expect(switched?.payload).toMatchObject({ from: "a-1", to: "b-1", resumedSession: true });
    // the session file was copied into B's config dir (claude: projects/<cwd slug>/<session id>.jsonl)
    const b = await w.t.client.accounts.get.query({ account: "b-1" });
    const copied = readdirSync(join(w.t.home, "accounts", b.id), { recursive: true }).map(String);
    expect(copied.some((p) => p.endsWith(`${done.sessionId}.jsonl`))).toBe(true);
  });

  it("an in-band rate_limit_error inside a 200 stream fails over at once (no waiting out the CLI's retries)", async () => {
    await addAccounts("2");
    const turns = new Map<string, number>();
    w.fake.setHandler((req) => {
      if (req.apiKey === `${KEY_A}2`) return isMain(req) ? fakeReply.streamError("rate_limit_error", { deltas: ["Work"], message: "Rate limited in band" }) : undefined;
      return req.apiKey === `${KEY_B}2` ? serveWithB(req, turns) : "unknown key";
    });
    const started = Date.now();
    const spawned = await w.t.client.agents.spawn.mutate({ provider: "claude", repo: w.repo, prompt: "FAILOVER_TASK_TWO: finish", account: "a-2" });
    const done = await waitForAgent(w.t.client, spawned.id, ["idle", "crashed", "waiting_for_account", "stopped"], 120_000);
    expect(done.status, done.statusReason ?? "").toBe("idle");
    expect(done.accountLabel).toBe("b-2");
    const a = await w.t.client.accounts.get.query({ account: "a-2" });
    expect(a.status).toBe("exhausted");
    // no reset time announced: the configured cooldown (120 s) from the moment it hit the limit
    const until = Date.parse(a.exhaustedUntil!);
    expect(until).toBeGreaterThan(started + 100_000);
    expect(until).toBeLessThanOrEqual(Date.now() + 120_000);
    // the CLI would have retried A ten times with back-off; we stopped after the first retry notice
    expect(w.fake.requests.filter((r) => isMain(r) && r.apiKey === `${KEY_A}2`).length).toBeLessThanOrEqual(2);
  });

  it("a plain 500 is not a usage limit: no failover, account A stays available", async () => {
    await addAccounts("3");
    w.fake.setHandler((req) => {
      if (req.apiKey === `${KEY_A}3`) return isMain(req) ? fakeReply.httpError(500, { message: "Internal server error", headers: { "x-should-retry": "false" } }) : undefined;
      return "B must not be used";
    });
    const spawned = await w.t.client.agents.spawn.mutate({ provider: "claude", repo: w.repo, prompt: "FAILOVER_TASK_THREE", account: "a-3" });
    const done = await waitForAgent(w.t.client, spawned.id, ["idle", "crashed", "waiting_for_account", "stopped"], 120_000);
    expect(done.status).toBe("crashed");
    expect(done.accountLabel).toBe("a-3");
    expect((await w.t.client.accounts.get.query({ account: "a-3" })).status).toBe("available");
    expect(w.fake.requests.filter((r) => isMain(r) && r.apiKey === `${KEY_B}3`)).toHaveLength(0);
  });

  it("with every account exhausted the agent waits for an account, then resumes when the limit passes", async () => {
    for (const a of await w.t.client.accounts.list.query()) await w.t.client.accounts.remove.mutate({ account: a.id, force: true });
    await w.t.client.accounts.add.mutate({ provider: "claude", label: "solo", kind: "api-key", secret: `${KEY_A}solo` });
    // far enough ahead that a loaded machine reaches the 429 before the limit has passed
    const resetAt = Math.ceil(Date.now() / 1000) + 10;
    let limited = true;
    const turns = new Map<string, number>();
    w.fake.setHandler((req) => {
      if (limited && isMain(req)) return fakeReply.httpError(429, { message: `Claude AI usage limit reached|${resetAt}`, headers: { "x-should-retry": "false" } });
      return serveWithB(req, turns);
    });
    const spawned = await w.t.client.agents.spawn.mutate({ provider: "claude", repo: w.repo, prompt: "FAILOVER_TASK_FOUR" });
    const waiting: AgentInfo = await waitForAgent(w.t.client, spawned.id, ["waiting_for_account", "idle", "crashed"], 60_000);
    expect(waiting.status, waiting.statusReason ?? "").toBe("waiting_for_account");
    expect(waiting.statusReason).toContain(new Date(resetAt * 1000).toISOString());
    limited = false;
    const done = await waitForAgent(w.t.client, spawned.id, ["idle", "crashed", "stopped"], 60_000);
    expect(done.status, done.statusReason ?? "").toBe("idle");
    expect(done.accountLabel).toBe("solo");
    expect(Date.now()).toBeGreaterThanOrEqual(resetAt * 1000);
  });
});

describe("account failover (the fake agent)", () => {
  it("a fake agent runs on its account's key, and at a usage limit resumes its session on the next account", async () => {
    for (const a of await w.t.client.accounts.list.query()) await w.t.client.accounts.remove.mutate({ account: a.id, force: true });
    await w.t.client.accounts.add.mutate({ provider: "fake", label: "fake-a", kind: "api-key", secret: "fake-key-aaaa-0001" });
    await w.t.client.accounts.add.mutate({ provider: "fake", label: "fake-b", kind: "api-key", secret: "fake-key-bbbb-0002" });
    const resetsAt = "2030-01-01T00:00:00.000Z";
    const prompt = fakeAgentPrompt("FAKE_FAILOVER", {
      steps: [{ bash: 'echo "$ANTHROPIC_API_KEY" > key-first.txt' }, { rateLimit: { resetsAt } }],
      resume: [[{ bash: 'echo "$ANTHROPIC_API_KEY" > key-second.txt' }, { done: "done on fake-b" }]],
    });
    const spawned = await w.t.client.agents.spawn.mutate({ provider: "fake", repo: w.repo, prompt, account: "fake-a" });
    const done = await waitForAgent(w.t.client, spawned.id, ["idle", "crashed", "waiting_for_account", "stopped"], 60_000);
    expect(done.status, done.statusReason ?? "").toBe("idle");
    expect(done.result).toBe("done on fake-b");
    expect(done.accountLabel).toBe("fake-b");
    expect(readFileSync(join(done.workspacePath, "key-first.txt"), "utf8").trim()).toBe("fake-key-aaaa-0001");
    expect(readFileSync(join(done.workspacePath, "key-second.txt"), "utf8").trim()).toBe("fake-key-bbbb-0002");
    const a = await w.t.client.accounts.get.query({ account: "fake-a" });
    expect(a).toMatchObject({ provider: "fake", status: "exhausted", exhaustedUntil: resetsAt });
    // the same session: its files (the fake agent's session state) went along to fake-b's config dir
    const switched = (await eventsOf(spawned.id)).find((e) => e.type === "agent.account_switched");
    expect(switched?.payload).toMatchObject({ from: "fake-a", to: "fake-b", resumedSession: true });
    expect(done.sessionId).not.toBeNull();
    const b = await w.t.client.accounts.get.query({ account: "fake-b" });
    expect(readdirSync(join(w.t.home, "accounts", b.id), { recursive: true }).map(String).some((p) => p.includes(done.sessionId!))).toBe(true);
  });
});

describe("account credentials on disk", () => {
  it("never stores a secret in plain text in the database", async () => {
    const secret = "sk-ant-plaintext-canary-7f3a9";
    await w.t.client.accounts.add.mutate({ provider: "claude", label: "canary", kind: "api-key", secret });
    const listed = await w.t.client.accounts.get.query({ account: "canary" });
    expect(JSON.stringify(listed)).not.toContain(secret);
    expect(listed.secretHint).toBe(`…${secret.slice(-4)}`);
    if (TEST_STORE === "postgres") {
      const stored = await storeContents(w.t.home);
      expect(stored).toContain("canary");
      expect(stored).not.toContain(secret);
      return;
    }
    w.t.server.db.$client.pragma("wal_checkpoint(TRUNCATE)");
    for (const file of ["switchyard.db", "switchyard.db-wal"]) {
      const path = join(w.t.home, file);
      if (existsSync(path)) expect(readFileSync(path).includes(Buffer.from(secret))).toBe(false);
    }
  });
});
