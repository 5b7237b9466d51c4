import { writeFileSync } from "node:fs";
import { join } from "node:path";
import type { Command } from "commander";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { AgentApproval, AgentInfo } from "../../shared/agents";
import { makeRepo, waitForAgent } from "../testing/agents-world";
import { fakeAgentPrompt } from "../testing/fake-agent";
import { removeHome, startTestServer, tempHome, type TestServer } from "../testing/server-harness";
import { capturedIo, commandPaths, yard } from "../testing/cli-harness";
import { Cli } from "./commands/common";
import type { DoctorReport } from "./doctor";
import { createProgram } from "./program";

/**
 * Output for people by default, JSON with --json: every command that prints data, run in-process
 * against the real server. Each --json output parses and is the data; the default is short text
 * and tables that fit 80 columns; colors only on a terminal without NO_COLOR. The last test checks
 * that every command of the tree with a --json option was run here with it.
 */
let t: TestServer;
let repo: string;
let cwd: string;
const jsonRan = new Set<string>();
const program = createProgram(new Cli(capturedIo()));

/** The command path of an argv: ["agent", "spawn", "--x"] -> "agent spawn". */
function pathOf(args: string[]): string {
  const names: string[] = [];
  let cmd: Command | undefined = program;
  for (const a of args) {
    cmd = cmd.commands.find((c) => c.name() === a);
    if (!cmd) break;
    names.push(a);
  }
  return names.join(" ");
}

const run = (args: string[], opts: { env?: Record<string, string>; tty?: boolean } = {}) => yard(args, { env: { SWITCHYARD_URL: t.url, ...opts.env }, tty: opts.tty });

/** `yard <args> --json`, which must succeed; its output parsed. */
async function json<T = unknown>(args: string[], env: Record<string, string> = {}): Promise<T> {
  const r = await run([...args, "--json"], { env });
  expect(r.code, `yard ${args.join(" ")} --json: ${r.err}`).toBe(0);
  jsonRan.add(pathOf(args));
  return JSON.parse(r.out) as T;
}

/** `yard <args>` for people, which must succeed; its output. */
async function text(args: string[]): Promise<string> {
  const r = await run(args);
  expect(r.code, `yard ${args.join(" ")}: ${r.err}`).toBe(0);
  return r.out;
}

/** A table for people: every line fits 80 columns. */
async function table(args: string[]): Promise<string> {
  const out = await text(args);
  for (const line of out.split("\n")) expect(line.length, `yard ${args.join(" ")}: "${line}"`).toBeLessThanOrEqual(80);
  return out;
}

async function until<T>(what: string, read: () => Promise<T>, ok: (v: T) => boolean): Promise<T> {
  const deadline = Date.now() + 30_000;
  for (;;) {
    const v = await read();
    if (ok(v)) return v;
    if (Date.now() > deadline) throw new Error(`${what}: not reached; last ${JSON.stringify(v)}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

beforeAll(async () => {
  t = await startTestServer();
  repo = makeRepo();
  cwd = tempHome("switchyard-cli-output-");
  writeFileSync(join(cwd, "ok.yaml"), `name: Ok\nversion: "1.0"\nagents:\n  a: {model: mock/demo, systemPrompt: "SAY[hello from the json run]"}\nflow: {type: sequential, steps: [{agent: a}]}\n`);
});
afterAll(async () => {
  // agents outlive the server (detached): none is left running, even after a failure
  for (const a of (await t?.client.agents.list.query({}).then((p) => p.items, () => [])) ?? []) {
    if (a.status === "starting" || a.status === "running") await t.client.agents.stop.mutate({ agentId: a.id }).catch(() => undefined);
  }
  await t?.stop();
  removeHome(t.home);
  removeHome(repo);
  removeHome(cwd);
});

const ALIAS = "json-otter";
const COMMIT = 'git add -A && git -c user.name=a -c user.email=a@b commit -qm "json"';
const PROMPT = fakeAgentPrompt("the json task, a long prompt nobody wants to read back", {
  steps: [
    { text: "hello from json" },
    { write: { path: "json.txt", content: "j\n" } },
    { bash: COMMIT },
    { permission: { tool: "Bash", input: { command: "echo allowed" } } },
    { permission: { tool: "Bash", input: { command: "echo denied" } } },
    { questions: [{ id: "q1", question: "Proceed?" }] },
  ],
  resume: [[{ done: "answered" }], [{ done: "followed up" }]],
});

describe("yard agent", () => {
  let agent: AgentInfo;

  it("spawn: two lines for people (who, where, how to follow), never the prompt", async () => {
    const r = await run(["agent", "spawn", "--provider", "fake", "--repo", repo, "--alias", ALIAS, "--permission", "ask", "--prompt", PROMPT]);
    expect(r.code, r.err).toBe(0);
    agent = await t.client.agents.get.query({ agentId: ALIAS });
    expect(r.out).toBe(`Spawned ${ALIAS} (${agent.id}, fake) on switchyard/${ALIAS}\nWorktree ${agent.workspacePath}; follow it: yard agent logs ${ALIAS} -f\n`);
    expect(r.out).not.toContain("nobody wants to read back");
  });

  it("spawn --json: the whole record", async () => {
    const hanger = await json<AgentInfo>(["agent", "spawn", "--provider", "fake", "--repo", repo, "--alias", "json-sloth", "--prompt", fakeAgentPrompt("hang", [{ hang: true }])]);
    expect(hanger).toMatchObject({ alias: "json-sloth", provider: "fake", branch: "switchyard/json-sloth" });
    expect(hanger.prompt).toContain("hang");
  });

  it("approvals, approve, deny", async () => {
    const first = await until("an approval", () => json<AgentApproval[]>(["agent", "approvals", ALIAS]), (l) => l.length === 1);
    const approvals = await table(["agent", "approvals"]);
    expect(approvals).toMatch(new RegExp(`^APPROVAL\\s+AGENT\\s+TOOL\\s+INPUT\\n${first[0]!.id}\\s+${ALIAS}\\s+Bash\\s+\\{"command":"echo a`));
    expect(await json(["agent", "approve", first[0]!.id])).toMatchObject({ id: first[0]!.id, status: "allowed" });
    const second = await until("the second approval", () => json<AgentApproval[]>(["agent", "approvals", ALIAS]), (l) => l.length === 1 && l[0]!.id !== first[0]!.id);
    expect(await json(["agent", "deny", second[0]!.id, "--message", "not that"])).toMatchObject({ status: "denied", message: "not that" });
    expect(await waitForAgent(t.client, agent.id)).toMatchObject({ status: "waiting_for_input" });
  });

  it("list, get, logs, diff", async () => {
    const list = await json<AgentInfo[]>(["agent", "list"]);
    expect(list.map((a) => a.alias)).toEqual(expect.arrayContaining([ALIAS, "json-sloth"]));
    const listed = await table(["agent", "list"]);
    expect(listed.split("\n")[0]).toMatch(/^ALIAS\s+PROVIDER\s+STATUS\s+UPDATED\s+NOTE$/);
    // the dashboard's words for a status ("Needs you", "Done"), not the stored values (--json keeps those)
    expect(listed).toMatch(new RegExp(`^${ALIAS}\\s+fake\\s+Needs you\\s+\\d+s ago\\s+q1: Proceed\\?$`, "m"));
    expect(await json(["agent", "get", ALIAS])).toMatchObject({ id: agent.id, status: "waiting_for_input" });
    const logs = (await run(["agent", "logs", ALIAS, "--json"])).out.trimEnd().split("\n").map((l) => JSON.parse(l) as { line: number; events: unknown[] });
    jsonRan.add("agent logs");
    expect(logs.length).toBeGreaterThan(3);
    expect(logs.every((l) => typeof l.line === "number" && Array.isArray(l.events))).toBe(true);
    expect(JSON.stringify(logs)).toContain("hello from json");
    const diff = await json<{ files: Array<{ path: string }>; patch?: string }>(["agent", "diff", ALIAS, "--patch"]);
    expect(diff.files.map((f) => f.path)).toContain("json.txt");
    expect(diff.patch).toContain("+j");
  });

  it("resume, message, merge, cleanup, sweep", async () => {
    expect(await json(["agent", "resume", ALIAS, "--answer", "q1=yes"])).toMatchObject({ id: agent.id });
    // idle, and its clean worktree removed (a message while the removal runs races it: see the report)
    await until("idle", () => t.client.agents.get.query({ agentId: ALIAS }), (a) => a.status === "idle" && a.sessionNumber === 2 && a.workspaceRemoved);
    expect(await json(["agent", "message", ALIAS, "one", "more"])).toMatchObject({ delivered: "now" });
    await until("idle again", () => t.client.agents.get.query({ agentId: ALIAS }), (a) => a.status === "idle" && a.sessionNumber === 3 && a.workspaceRemoved);
    // idle is "Done", as on the dashboard, and --status takes either word
    for (const status of ["done", "idle"]) expect(await table(["agent", "list", "--status", status])).toMatch(new RegExp(`^${ALIAS}\\s+fake\\s+Done\\s+\\d+s ago`, "m"));
    expect(await json(["agent", "merge", ALIAS])).toMatchObject({ merged: true, into: "main", branch: `switchyard/${ALIAS}` });
    expect(await text(["agent", "merge", ALIAS])).toMatch(/^Nothing merged: already merged into main/);
    expect(await json(["agent", "cleanup", ALIAS])).toMatchObject({ id: agent.id, workspaceRemoved: true });
    expect(Array.isArray(await json(["agent", "sweep"]))).toBe(true);
    await table(["agent", "sweep"]);
  });

  it("stop, delete", async () => {
    expect(await json(["agent", "stop", "json-sloth"])).toMatchObject({ alias: "json-sloth", status: "stopped" });
    expect(await text(["agent", "delete", "json-sloth", "--force"])).toMatch(/^Deleted agent_/);
    const again = await run(["agent", "delete", ALIAS, "--json"]);
    expect(again.code, again.err).toBe(0);
    expect(JSON.parse(again.out)).toEqual({ deleted: agent.id });
    jsonRan.add("agent delete");
  });
});

describe("yard daemon", () => {
  it("spawn, trigger, snapshot, list, stop, resume, delete", async () => {
    const d = await json<{ id: string; name: string }>(["daemon", "spawn", "--task", "Echo triggers.", "--name", "json-daemon", "--model", "mock/echo"]);
    expect(d).toMatchObject({ name: "json-daemon", status: "running" });
    expect(await json(["daemon", "trigger", "json-daemon", '{"n":1}'])).toHaveProperty("seq");
    expect(await text(["daemon", "trigger", "json-daemon", "plain", "text"])).toMatch(/^Queued as #\d+\n$/);
    expect(await json(["daemon", "snapshot", "json-daemon"])).toMatchObject({ id: d.id, name: "json-daemon" });
    expect(await text(["daemon", "snapshot", "json-daemon"])).toMatch(/^daemon {5}json-daemon \(daemon_/);
    expect((await json<Array<{ id: string }>>(["daemon", "list"])).map((x) => x.id)).toContain(d.id);
    expect(await table(["daemon", "list"])).toMatch(new RegExp(`^NAME\\s+STATUS\\s+QUEUE\\s+ID\\njson-daemon\\s+running\\s+\\d+/\\d+\\s+${d.id}$`, "m"));
    expect(await json(["daemon", "stop", "json-daemon"])).toMatchObject({ id: d.id, status: "stopped" });
    expect(await json(["daemon", "resume", "json-daemon"])).toMatchObject({ id: d.id, status: "running" });
    expect(await json(["daemon", "delete", "json-daemon"])).toEqual({ deleted: true });
  });
});

describe("yard account", () => {
  it("add, list, reset, doctor sees it, remove", async () => {
    const added = await json(["account", "add", "--provider", "codex", "--api-key", "sk-json-test-key-ZZZZ", "--label", "json-codex"]);
    expect(added).toMatchObject({ label: "json-codex", provider: "codex", kind: "api-key", secretHint: "…ZZZZ" });
    expect(await json(["account", "list"])).toEqual([expect.objectContaining({ label: "json-codex" })]);
    expect(await table(["account", "list"])).toMatch(/^json-codex\s+codex\s+api-key\s+…ZZZZ\s+0\s+available$/m);
    expect(await json(["account", "reset", "json-codex"])).toMatchObject({ label: "json-codex", status: "available" });
    // the doctor of this server's config: its port answers as Switchyard, and the account counts
    const report = await json<DoctorReport>(["doctor"], { SWITCHYARD_PORT: String(t.port), SWITCHYARD_HOME: t.home });
    expect(report.checks.find((c) => c.id === "port")).toMatchObject({ status: "ok", detail: expect.stringContaining("a Switchyard server answers") });
    expect(report.checks.find((c) => c.id === "credentials-codex")).toMatchObject({ status: "ok", detail: expect.stringContaining("1 account") });
    expect(await json(["account", "remove", "json-codex"])).toBeDefined();
  });
});

describe("yard run, runs, continue", () => {
  it("--json prints the run's events as JSON lines and keeps the exit code", async () => {
    const r = await run(["run", "ok.yaml", "--cwd", cwd, "--input", "go", "--json"]);
    expect(r.code, r.err).toBe(0);
    const events = r.out.trimEnd().split("\n").map((l) => JSON.parse(l) as { type: string; scope: { runId?: string } });
    jsonRan.add("run");
    expect(events[0]?.type).toBe("run.started");
    expect(events.at(-1)?.type).toBe("run.completed");
    expect(JSON.stringify(events)).toContain("hello from the json run");
    const runs = await json<Array<{ runId: string; status: string }>>(["runs", "--cwd", cwd]);
    expect(runs[0]).toMatchObject({ runId: events[0]!.scope.runId, status: "completed" });
    expect(await table(["runs", "--cwd", cwd])).toMatch(/^RUN\s+STATUS\s+STARTED\s+STRATEGY\n\S+\s+completed\s+\d+s ago\s+Ok\n/);
    const again = await run(["continue", runs[0]!.runId, "--input", "again", "--json"]);
    expect(again.code, again.err).toBe(0);
    jsonRan.add("continue");
    expect(again.out.trimEnd().split("\n").map((l) => (JSON.parse(l) as { type: string }).type).at(-1)).toBe("run.completed");
  });

  it("runs lists the newest --limit, says how many more there are, and --all reads every page", async () => {
    for (let i = 0; i < 3; i++) expect((await run(["run", "ok.yaml", "--cwd", cwd, "--input", `more ${i}`])).code).toBe(0);
    const every = await json<Array<{ runId: string; startedAt: string }>>(["runs", "--cwd", cwd, "--all"]);
    expect(every.length).toBeGreaterThanOrEqual(3);
    expect(every.map((r) => r.startedAt)).toEqual([...every.map((r) => r.startedAt)].sort().reverse());
    const cut = await run(["runs", "--cwd", cwd, "--limit", "2"]);
    expect(cut.code, cut.err).toBe(0);
    expect(cut.out.trimEnd().split("\n")).toHaveLength(3); // the header and 2 runs
    expect(cut.err).toBe(`${every.length - 2} more runs not shown: --limit <n> or --all\n`);
    const whole = await run(["runs", "--cwd", cwd, "--limit", String(every.length)]);
    expect(whole.err).toBe("");
    expect((await run(["runs", "--limit", "0"])).code).not.toBe(0);
  });
});

describe("the other commands", () => {
  it("health, emit, login", async () => {
    expect(await json(["health"])).toMatchObject({ status: "ok" });
    expect(await text(["health"])).toMatch(new RegExp(`^ok: ${t.url} up \\d+s, \\d+ active runs?, \\d+ connected clients?\\n$`));
    expect(await json(["emit", "a", "note"])).toEqual({ id: expect.any(Number) });
    expect(await text(["emit", "another"])).toMatch(/^emitted event \d+\n$/);
    expect(await json(["login"])).toEqual({ link: expect.stringMatching(/^http:\/\//) });
  });

  it("servers: this one, as a table and as JSON", async () => {
    const listed = await json<Array<{ url: string; self: boolean }>>(["servers"]);
    expect(listed).toEqual([expect.objectContaining({ url: t.url, self: true })]);
    const out = await table(["servers"]);
    expect(out.split("\n")[0]).toMatch(/^URL\s+HOST\s+UP\s+BEAT\s+VERSION$/);
    expect(out).toContain(`${t.url} (this one)`);
  });

  it("ask, answer, listen: their output is what agents parse (the answer's text; one JSON line)", async () => {
    await t.client.agents.spawn.mutate({ provider: "fake", repo, alias: "tester", prompt: fakeAgentPrompt("hang", [{ hang: true }]) });
    const asking = run(["ask", "Ship", "it?", "--from", "tester", "--agent-id", "human", "--poll-interval", "50"]);
    const [pending] = await until("the question", () => t.client.conversations.list.query({}), (l) => l.some((c) => c.question === "Ship it?" && c.status === "pending"));
    const conversationId = pending!.id;
    const answered = await run(["answer", "yes,", "ship", "--conversation-id", conversationId]);
    expect(answered).toEqual({ code: 0, out: `${JSON.stringify({ conversationId, status: "answered" })}\n`, err: "" });
    expect(await asking).toEqual({ code: 0, out: "yes, ship\n", err: "" });

    const asked = await t.client.conversations.ask.mutate({ fromAgentId: "tester", toAgentId: "human", question: "Heard?" });
    const heard = await run(["listen", "--agent-id", "human"]);
    const tester = (await t.client.agents.get.query({ agentId: "tester" })).id;
    expect(heard).toEqual({ code: 0, out: `${JSON.stringify({ conversationId: asked.id, fromAgentId: tester, question: "Heard?" })}\n`, err: "" });
    expect(await json(["listen", "--agent-id", "human"])).toEqual({ conversationId: asked.id, fromAgentId: tester, question: "Heard?" });
    await t.client.conversations.answer.mutate({ conversationId: asked.id, answer: "ok" });
    const withJson = run(["ask", "Json?", "--from", "tester", "--agent-id", "human", "--poll-interval", "50", "--json"]);
    const [q] = await until("the json question", () => t.client.conversations.list.query({}), (l) => l.some((c) => c.question === "Json?" && c.status === "pending"));
    expect(await json(["answer", "sure", "--conversation-id", q!.id])).toEqual({ conversationId: q!.id, status: "answered" });
    expect(JSON.parse((await withJson).out)).toEqual({ conversationId: q!.id, answer: "sure" });
    jsonRan.add("ask");
    await t.client.agents.stop.mutate({ agentId: "tester" });
  });

  it("worker token create and worker list: the token once (on stdout alone), the workers as a table and as JSON", async () => {
    const made = await json<{ name: string; token: string }>(["worker", "token", "create", "--name", "out-1"]);
    expect(made).toEqual({ name: "out-1", token: expect.stringMatching(/^syw\.out-1\./) });
    const plain = await run(["worker", "token", "create", "--name", "out-2"]);
    expect(plain.code, plain.err).toBe(0);
    expect(plain.out).toMatch(/^syw\.out-2\.[\w-]+\n$/);
    expect(plain.err).toContain("yard worker --server");
    const listed = await json<Array<{ name: string; state: string }>>(["worker", "list"]);
    expect(listed.map((w) => [w.name, w.state])).toEqual([
      ["out-1", "new"],
      ["out-2", "new"],
    ]);
    const out = await table(["worker", "list"]);
    expect(out.split("\n")[0]).toMatch(/^NAME\s+STATE\s+AGENTS\s+HOST/);
    expect(out).toContain("never connected");
    for (const name of ["out-1", "out-2"]) await t.client.workers.revoke.mutate({ name });
  });

  it("colors only on a terminal, never with NO_COLOR", async () => {
    expect((await run(["health"], { tty: true })).out).toContain("\x1b[32mok\x1b[39m");
    expect((await run(["health"], { tty: true, env: { NO_COLOR: "1" } })).out).not.toContain("\x1b[");
    expect((await run(["health"])).out).not.toContain("\x1b[");
  });

  it("every command with --json was run with it here (events streams until Ctrl-C; db copy and db prune: yard-db*.int.test.ts)", () => {
    const withJson = commandPaths(program)
      .filter((p) => {
        let cmd: Command = program;
        for (const name of p) cmd = cmd.commands.find((c) => c.name() === name)!;
        return cmd.options.some((o) => o.long === "--json");
      })
      .map((p) => p.join(" "));
    expect(withJson.filter((p) => p !== "events" && p !== "db copy" && p !== "db prune" && !jsonRan.has(p))).toEqual([]);
  });
});
