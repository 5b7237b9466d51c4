import { spawn } from "node:child_process";
import { writeFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { AgentApproval, AgentInfo } from "../../shared/agents";
import type { Conversation } from "../../shared/conversations";
import type { BusEvent } from "../../shared/events";
import { startAgentsWorld, waitForAgent, type AgentsWorld } from "../testing/agents-world";
import { fakeAgentPrompt } from "../testing/fake-agent";
import { removeHome, tempHome } from "../testing/server-harness";

/**
 * Aliases everywhere: every tRPC procedure, `yard` command and HTTP route that takes an agent or
 * a daemon is called with the agent's alias / the daemon's name instead of its id, against the
 * real server and real agent processes; each answers about the right entity, with canonical ids.
 * And an agent blocked on a tool approval "needs you" (API and `yard agent list`) until decided.
 */
const yard = resolve(import.meta.dirname, "..", "..", "bin", "yard.mjs");
let w: AgentsWorld;
let scratch: string;

function runYard(args: string[]): Promise<{ code: number | null; out: string; err: string }> {
  return new Promise((res) => {
    const child = spawn(process.execPath, [yard, ...args], { env: { ...process.env, SWITCHYARD_URL: w.t.url }, stdio: ["ignore", "pipe", "pipe"] });
    let out = "";
    let err = "";
    child.stdout.on("data", (d) => (out += d));
    child.stderr.on("data", (d) => (err += d));
    child.on("exit", (code) => res({ code, out, err }));
  });
}

/** `yard ...` that must succeed; its stdout as JSON. */
async function yardJson<T>(args: string[]): Promise<T> {
  const r = await runYard(args);
  expect(r.code, `yard ${args.join(" ")}: ${r.err}`).toBe(0);
  return JSON.parse(r.out) as T;
}

type Handlers<T> = { onData: (d: T) => void; onError: (err: unknown) => void };

/** Data of a subscription until `done` says enough (then unsubscribed); fails after 20 s. */
function collect<T>(subscribe: (h: Handlers<T>) => { unsubscribe(): void }, done: (all: T[]) => boolean): Promise<T[]> {
  return new Promise((res, rej) => {
    const all: T[] = [];
    const timer = setTimeout(() => {
      sub.unsubscribe();
      rej(new Error(`subscription: not enough data in 20 s (${all.length} items)`));
    }, 20_000);
    const sub = subscribe({
      onData: (d) => {
        all.push(d);
        if (!done(all)) return;
        clearTimeout(timer);
        sub.unsubscribe();
        res(all);
      },
      onError: (err) => {
        clearTimeout(timer);
        rej(err instanceof Error ? err : new Error(String(err)));
      },
    });
  });
}

async function until<T>(what: string, read: () => Promise<T>, ok: (v: T) => boolean, timeoutMs = 30_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  let last: T | undefined;
  while (Date.now() < deadline) {
    last = await read();
    if (ok(last)) return last;
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`${what}: not reached in ${timeoutMs} ms; last: ${JSON.stringify(last)}`);
}

/** The STATUS cell of `alias`'s row in `yard agent list` (a status such as "Needs you" has spaces), or undefined when it is not listed. */
async function listed(alias: string, args: string[] = []): Promise<string | undefined> {
  const r = await runYard(["agent", "list", ...args]);
  expect(r.code, r.err).toBe(0);
  const [header = "", ...rows] = r.out.split("\n");
  const [from, to] = [header.indexOf("STATUS"), header.indexOf("UPDATED")];
  const row = rows.find((l) => l.split(/\s+/)[0] === alias);
  return row?.slice(from, to).trim();
}

const pendingOf = (agentId: string) => w.t.client.agents.approvals.query({ agentId, status: "pending" });

beforeAll(async () => {
  w = await startAgentsWorld();
  scratch = tempHome("switchyard-aliases-");
});
afterAll(async () => {
  await w?.stop();
  removeHome(scratch);
});

describe("an agent blocked on a tool approval needs you", () => {
  it("shows needsYou (API, list, yard agent list) while the approval is pending, running again once decided, and needs you again for questions", async () => {
    const gate = join(scratch, "needs-you-gate");
    const a = await w.t.client.agents.spawn.mutate({
      provider: "fake",
      repo: w.repo,
      alias: "needy-otter",
      permissionMode: "ask",
      prompt: fakeAgentPrompt("approve then ask", [
        { permission: { tool: "Bash", input: { command: "echo ok > approved.txt" } } },
        { waitFile: gate },
        { questions: [{ id: "q1", question: "Ship it?" }] },
      ]),
    });
    const [approval] = await until("a pending approval", () => pendingOf(a.id), (l) => l.length === 1);
    const blocked = await w.t.client.agents.get.query({ agentId: a.id });
    expect(blocked).toMatchObject({ status: "running", needsYou: true, pendingApprovals: 1 });
    expect((await w.t.client.agents.list.query({})).items.find((x) => x.id === a.id)).toMatchObject({ status: "running", needsYou: true, pendingApprovals: 1 });
    expect(await listed("needy-otter")).toBe("Needs you");
    expect(await listed("needy-otter", ["--status", "needs_you"])).toBeDefined();
    expect(await listed("needy-otter", ["--status", "needs-you"])).toBeDefined();

    await w.t.client.agents.decide.mutate({ approvalId: approval!.id, allow: true });
    const decided = await until("decided", () => w.t.client.agents.get.query({ agentId: a.id }), (x) => !x.needsYou);
    expect(decided).toMatchObject({ status: "running", needsYou: false, pendingApprovals: 0 });
    expect(await listed("needy-otter")).toBe("Running");
    expect(await listed("needy-otter", ["--status", "needs_you"])).toBeUndefined();

    writeFileSync(gate, "go");
    const asking = await waitForAgent(w.t.client, a.id);
    expect(asking).toMatchObject({ status: "waiting_for_input", needsYou: true, pendingApprovals: 0 });
    expect(await listed("needy-otter")).toBe("Needs you");
    await w.t.client.agents.stop.mutate({ agentId: a.id });
  });
});

describe("agents by alias", () => {
  const ALIAS = "alias-pangolin";
  const HANGER = "alias-sloth";
  let agent: AgentInfo;
  let hanger: AgentInfo;
  let approval: AgentApproval;
  let question: Conversation;

  beforeAll(async () => {
    agent = await w.t.client.agents.spawn.mutate({
      provider: "fake",
      repo: w.repo,
      alias: ALIAS,
      permissionMode: "ask",
      prompt: fakeAgentPrompt("aliases", {
        steps: [
          { text: "hello from the pangolin" },
          { write: { path: "pangolin.txt", content: "p\n" } },
          { bash: 'git add -A && git -c user.name=a -c user.email=a@b commit -qm "pangolin"' },
          { permission: { tool: "Bash", input: { command: "echo allowed > allowed.txt" } } },
          { bash: 'git add -A && git -c user.name=a -c user.email=a@b commit -qm "allowed"' },
          { questions: [{ id: "q1", question: "Proceed?" }] },
        ],
        resume: [[{ done: "answered" }], [{ done: "followed up" }], [{ done: "followed up again" }]],
      }),
    });
    hanger = await w.t.client.agents.spawn.mutate({ provider: "fake", repo: w.repo, alias: HANGER, prompt: fakeAgentPrompt("hang", [{ text: "hanging" }, { hang: true }]) });
    approval = (await until("the approval", () => pendingOf(agent.id), (l) => l.length === 1))[0]!;
    question = await w.t.client.conversations.ask.mutate({ fromAgentId: "human", toAgentId: ALIAS, question: "How is it going?" });
  });

  // while the approval is pending: everything that reads an agent, by alias
  const reading: Array<{ name: string; run: () => Promise<void> }> = [
    { name: "agents.get", run: async () => expect(await w.t.client.agents.get.query({ agentId: ALIAS })).toMatchObject({ id: agent.id, needsYou: true }) },
    {
      name: "agents.approvals",
      run: async () => expect(await w.t.client.agents.approvals.query({ agentId: ALIAS, status: "pending" })).toEqual([expect.objectContaining({ id: approval.id, agentId: agent.id })]),
    },
    {
      name: "agents.output",
      run: async () => {
        const page = await w.t.client.agents.output.query({ agentId: ALIAS, limit: 50 });
        expect(page.agentId).toBe(agent.id);
        expect(JSON.stringify(page.lines)).toContain("hello from the pangolin");
      },
    },
    { name: "agents.changes", run: async () => expect((await w.t.client.agents.changes.query({ agentId: ALIAS })).files.map((f) => f.path)).toContain("pangolin.txt") },
    { name: "agents.diff", run: async () => expect((await w.t.client.agents.diff.query({ agentId: ALIAS })).patch).toContain("+p") },
    {
      name: "agents.onOutput",
      run: async () => {
        type Batch = { data: { lines: Array<{ raw?: string | null }> } };
        const got = await collect<Batch>(
          (h) => w.t.client.agents.onOutput.subscribe({ agentId: ALIAS, lastEventId: "0", format: "raw" }, h),
          (all) => all.some((b) => b.data.lines.some((l) => l.raw?.includes("hello from the pangolin"))),
        );
        expect(got.length).toBeGreaterThan(0);
      },
    },
    {
      name: "events.list / events.count (agent scope)",
      run: async () => {
        const { events } = await w.t.client.events.list.query({ afterId: 0, scope: { kind: "agent", id: ALIAS } });
        expect(events.length).toBeGreaterThan(0);
        expect(new Set(events.map((e) => e.scope.agentId))).toEqual(new Set([agent.id]));
        expect((await w.t.client.events.count.query({ afterId: 0, scope: { kind: "agent", id: ALIAS } })).count).toBe(events.length);
      },
    },
    {
      name: "events.onEventBatch (agent scope)",
      run: async () => {
        const got = await collect<{ data: BusEvent[] }>(
          (h) => w.t.client.events.onEventBatch.subscribe({ lastEventId: "0", scope: { kind: "agent", id: ALIAS } }, h),
          (all) => all.some((b) => b.data.some((e) => e.type === "agent.approval_requested")),
        );
        expect(new Set(got.flatMap((b) => b.data.map((e) => e.scope.agentId)))).toEqual(new Set([agent.id]));
      },
    },
    { name: "conversations.ask (toAgentId)", run: async () => expect(question.toAgentId).toBe(agent.id) },
    { name: "conversations.pending", run: async () => expect((await w.t.client.conversations.pending.query({ agentId: ALIAS })).map((c) => c.id)).toEqual([question.id]) },
    { name: "conversations.list", run: async () => expect((await w.t.client.conversations.list.query({ agentId: ALIAS })).map((c) => c.id)).toContain(question.id) },
    {
      name: "conversations.onPending",
      run: async () => {
        const got = await collect<{ data: Conversation }>((h) => w.t.client.conversations.onPending.subscribe({ agentId: ALIAS }, h), (all) => all.length >= 1);
        expect(got[0]!.data.id).toBe(question.id);
      },
    },
    { name: "yard agent get", run: async () => expect((await yardJson<AgentInfo>(["agent", "get", ALIAS, "--json"])).id).toBe(agent.id) },
    { name: "yard agent approvals", run: async () => expect((await yardJson<AgentApproval[]>(["agent", "approvals", ALIAS, "--json"])).map((a) => a.id)).toEqual([approval.id]) },
    { name: "yard agent logs", run: async () => expect((await runYard(["agent", "logs", ALIAS])).out).toContain("hello from the pangolin") },
    { name: "yard agent diff", run: async () => expect((await runYard(["agent", "diff", ALIAS])).out).toContain("pangolin.txt") },
    {
      name: "yard listen --agent-id",
      run: async () => expect(await yardJson<{ conversationId: string }>(["listen", "--agent-id", ALIAS])).toMatchObject({ conversationId: question.id }),
    },
    {
      name: "yard ask --from",
      run: async () => {
        const r = await runYard(["ask", "Anyone there?", "--from", ALIAS, "--agent-id", "human", "--timeout", "100"]);
        expect(r.code, r.err).toBe(2); // asked; nobody answered within the timeout
        const mine = (await w.t.client.conversations.list.query({ agentId: agent.id })).find((c) => c.question === "Anyone there?");
        expect(mine).toMatchObject({ fromAgentId: agent.id, toAgentId: "human" });
      },
    },
  ];
  it.each(reading)("$name takes the alias", async ({ run }) => run());

  it("yard agent approve, then yard agent resume <alias> answers its questions", async () => {
    await yardJson(["agent", "approve", approval.id, "--json"]);
    await until("questions", () => w.t.client.agents.get.query({ agentId: agent.id }), (a) => a.status === "waiting_for_input");
    expect((await yardJson<AgentInfo>(["agent", "resume", ALIAS, "--answer", "q1=yes", "--json"])).id).toBe(agent.id);
    expect(await waitForAgent(w.t.client, agent.id)).toMatchObject({ status: "idle", result: "answered" });
  });

  // once it is done: everything that acts on an agent, by alias
  const acting: Array<{ name: string; run: () => Promise<void> }> = [
    {
      name: "agents.message",
      run: async () => {
        const r = await w.t.client.agents.message.mutate({ agentId: ALIAS, text: "one more thing" });
        expect(r).toMatchObject({ delivered: "now", agent: { id: agent.id } });
        expect(await until("follow-up", () => w.t.client.agents.get.query({ agentId: agent.id }), (a) => a.status === "idle" && a.sessionNumber === 3)).toMatchObject({ result: "followed up" });
      },
    },
    {
      name: "yard agent message",
      run: async () => {
        expect(await yardJson(["agent", "message", ALIAS, "and", "another", "--json"])).toMatchObject({ delivered: "now" });
        await until("second follow-up", () => w.t.client.agents.get.query({ agentId: agent.id }), (a) => a.status === "idle" && a.sessionNumber === 4);
      },
    },
    { name: "agents.merge", run: async () => expect(await w.t.client.agents.merge.mutate({ agentId: ALIAS })).toMatchObject({ merged: true, branch: `switchyard/${ALIAS}` }) },
    { name: "yard agent merge", run: async () => expect(await yardJson(["agent", "merge", ALIAS, "--json"])).toMatchObject({ merged: false, branch: `switchyard/${ALIAS}` }) },
    { name: "agents.cleanup", run: async () => expect(await w.t.client.agents.cleanup.mutate({ agentId: ALIAS })).toMatchObject({ id: agent.id, workspaceRemoved: true }) },
    { name: "yard agent cleanup", run: async () => expect(await yardJson(["agent", "cleanup", ALIAS, "--json"])).toMatchObject({ id: agent.id, workspaceRemoved: true }) },
    { name: "agents.stop", run: async () => expect(await w.t.client.agents.stop.mutate({ agentId: HANGER })).toMatchObject({ id: hanger.id, status: "stopped" }) },
    { name: "yard agent stop", run: async () => expect(await yardJson(["agent", "stop", HANGER, "--json"])).toMatchObject({ id: hanger.id, status: "stopped" }) },
    { name: "agents.delete", run: async () => expect(await w.t.client.agents.delete.mutate({ agentId: HANGER, force: true })).toEqual({ deleted: hanger.id }) },
    { name: "yard agent delete", run: async () => expect(await yardJson(["agent", "delete", ALIAS, "--force", "--json"])).toEqual({ deleted: agent.id }) },
  ];
  it.each(acting)("$name takes the alias", async ({ run }) => run());

  it("an unknown alias is AGENT_NOT_FOUND", async () => {
    await expect(w.t.client.agents.get.query({ agentId: ALIAS })).rejects.toThrow(/No agent "alias-pangolin"/);
    const r = await runYard(["agent", "stop", "no-such-alias"]);
    expect(r.code).not.toBe(0);
    expect(r.err).toContain('No agent "no-such-alias"');
  });
});

describe("daemons by name", () => {
  const NAME = "alias-daemon";
  let id: string;
  const trigger = (ref: string, body: unknown) => fetch(`${w.t.url}/daemons/${encodeURIComponent(ref)}/trigger`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(body) });

  beforeAll(async () => {
    id = (await w.t.client.daemons.spawn.mutate({ task: "Echo triggers.", name: NAME, model: "mock/echo" })).id;
  });

  const cases: Array<{ name: string; run: () => Promise<void> }> = [
    { name: "daemons.trigger", run: async () => expect(await w.t.client.daemons.trigger.mutate({ id: NAME, payload: { n: 1 } })).toHaveProperty("seq") },
    {
      name: "POST /daemons/:id/trigger",
      run: async () => {
        const res = await trigger(NAME, { n: 2 });
        expect(res.status).toBe(202);
      },
    },
    { name: "yard daemon trigger", run: async () => expect(await yardJson(["daemon", "trigger", NAME, '{"n":3}', "--json"])).toHaveProperty("seq") },
    { name: "daemons.snapshot", run: async () => expect(await w.t.client.daemons.snapshot.query({ id: NAME })).toMatchObject({ id, name: NAME }) },
    { name: "yard daemon snapshot", run: async () => expect(await yardJson(["daemon", "snapshot", NAME, "--json"])).toMatchObject({ id, name: NAME }) },
    {
      name: "daemons.onEvents",
      run: async () => {
        const got = await collect<{ data: BusEvent[] }>(
          (h) => w.t.client.daemons.onEvents.subscribe({ daemonId: NAME }, h),
          (all) => all.flatMap((b) => b.data).filter((e) => e.type === "daemon.triggered").length >= 3,
        );
        expect(new Set(got.flatMap((b) => b.data.map((e) => e.scope.daemonId)))).toEqual(new Set([id]));
      },
    },
    {
      name: "events.list (daemon scope)",
      run: async () => {
        const { events } = await w.t.client.events.list.query({ afterId: 0, scope: { kind: "daemon", id: NAME } });
        expect(events.filter((e) => e.type === "daemon.triggered")).toHaveLength(3);
        expect(new Set(events.map((e) => e.scope.daemonId))).toEqual(new Set([id]));
      },
    },
    { name: "daemons.stop", run: async () => expect(await w.t.client.daemons.stop.mutate({ id: NAME })).toMatchObject({ id, status: "stopped" }) },
    { name: "daemons.resume", run: async () => expect(await w.t.client.daemons.resume.mutate({ id: NAME })).toMatchObject({ id, status: "running" }) },
    { name: "yard daemon stop", run: async () => expect(await yardJson(["daemon", "stop", NAME, "--json"])).toMatchObject({ id, status: "stopped" }) },
    { name: "yard daemon resume", run: async () => expect(await yardJson(["daemon", "resume", NAME, "--json"])).toMatchObject({ id, status: "running" }) },
    {
      name: "daemons.delete",
      run: async () => {
        expect(await w.t.client.daemons.delete.mutate({ id: NAME })).toEqual({ deleted: true });
        expect((await w.t.client.daemons.list.query()).map((d) => d.id)).not.toContain(id);
      },
    },
    {
      name: "yard daemon delete",
      run: async () => {
        const other = await w.t.client.daemons.spawn.mutate({ task: "x", name: "alias-daemon-2", model: "mock/echo" });
        expect(await yardJson(["daemon", "delete", "alias-daemon-2", "--json"])).toEqual({ deleted: true });
        expect((await w.t.client.daemons.list.query()).map((d) => d.id)).not.toContain(other.id);
      },
    },
  ];
  it.each(cases)("$name takes the name", async ({ run }) => run());

  it("a name shared by several daemons picks the running one, else is ambiguous; an unknown name is DAEMON_NOT_FOUND", async () => {
    const a = await w.t.client.daemons.spawn.mutate({ task: "x", name: "twin", model: "mock/echo" });
    const b = await w.t.client.daemons.spawn.mutate({ task: "x", name: "twin", model: "mock/echo" });
    await expect(w.t.client.daemons.trigger.mutate({ id: "twin", payload: 1 })).rejects.toThrow(/2 daemons are named "twin"/);
    expect((await trigger("twin", 1)).status).toBe(409);
    await w.t.client.daemons.stop.mutate({ id: a.id });
    expect(await w.t.client.daemons.snapshot.query({ id: "twin" })).toMatchObject({ id: b.id });
    expect((await trigger("twin", 1)).status).toBe(202);
    expect((await trigger("no-such-daemon", 1)).status).toBe(404);
    const r = await runYard(["daemon", "trigger", "no-such-daemon", "x"]);
    expect(r.code).not.toBe(0);
    expect(r.err).toMatch(/Daemon not found: no-such-daemon/);
  });
});
