import { existsSync, mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import type { BusEvent } from "../../shared/events";
import { workspaceTestHooks } from "../agents/workspace";
import { git, makeRepo } from "../testing/agents-world";
import { CommaClient, type Frame } from "../testing/comma-client";
import { fakeAgentPrompt, type FakeAgentScript } from "../testing/fake-agent";
import { startFakeModelServer, type FakeModelServer, type FakeReplyInput, type RecordedRequest } from "../testing/fake-model";
import { removeHome, startTestServer, type TestServer } from "../testing/server-harness";

/**
 * `type: cli` steps: coding-agent CLIs (the fake agent, and the real claude) as steps of a
 * strategy beside LLM agents, over /ws, against the fake model.
 */

const MODEL = "anthropic/claude-sonnet-4-5";
let fake: FakeModelServer;
let t: TestServer;
let repo: string;
const clients: CommaClient[] = [];

beforeAll(async () => {
  fake = await startFakeModelServer();
  t = await startTestServer({ env: { ANTHROPIC_BASE_URL: fake.url, ANTHROPIC_API_KEY: "k", SWITCHYARD_AGENT_RESULT_GRACE_MS: "1500" } });
  repo = makeRepo("switchyard-cli-steps-");
  mkdirSync(join(repo, "strategies"));
  git(repo, "commit", "--allow-empty", "-qm", "strategies dir (untracked)");
});
afterEach(() => {
  fake.setHandler(undefined);
  for (const c of clients.splice(0)) c.close();
});
afterAll(async () => {
  await t.stop();
  await fake.close();
  removeHome(t.home);
  removeHome(repo);
});

function strategy(name: string, body: string): string {
  const path = join(repo, "strategies", `${name}.yaml`);
  writeFileSync(path, body);
  return path;
}

async function startRun(path: string, input: string): Promise<{ c: CommaClient; runId: string }> {
  const c = await CommaClient.connect(t.url);
  clients.push(c);
  const prepared = await c.request({ type: "prepare_run", strategyPath: path, cwd: repo });
  expect(prepared.type, JSON.stringify(prepared)).toBe("run_prepared");
  const runId = prepared.runId as string;
  c.send({ type: "start_run", runId, input, requestId: `start-${runId}` });
  return { c, runId };
}

const ended = (runId: string) => (f: Frame) => f.runId === runId && (f.type === "strategy_completed" || f.type === "strategy_error");
const tagOf = (req: RecordedRequest) => /TAG\[(\w+)\]/.exec(req.script.system)?.[1];
const script = (s: FakeAgentScript) => fakeAgentPrompt("", s).trim();
const commitStep = (path: string, content: string) => [
  { write: { path, content } },
  { bash: `git add -A && git -c user.name=a -c user.email=a@b commit -qm "add ${path}"` },
];

async function runEvents(runId: string): Promise<BusEvent[]> {
  return (await t.client.events.list.query({ scope: { kind: "run", id: runId }, limit: 5000 })).events as BusEvent[];
}

describe("CLI agents as strategy steps", () => {
  it("plan (LLM) -> implement (cli: fake) -> review (LLM): the reviewer gets the implementer's result and diff", async () => {
    const implScript = script([...commitStep("impl.txt", "hello from the implementer\n"), { text: "implemented" }, { done: "IMPLEMENTED impl.txt" }]);
    fake.setHandler((req) => {
      const tag = tagOf(req);
      if (tag === "plan") return `Plan: write impl.txt.\n${implScript}`;
      if (tag === "review") return "LGTM";
      return undefined;
    });
    const path = strategy(
      "plan-impl-review",
      `name: Plan implement review\nversion: "1"\nagents:\n  plan: {model: ${MODEL}, systemPrompt: "TAG[plan]"}\n  implement:\n    type: cli\n    provider: fake\n    promptTemplate: "Implement this: {{input}}"\n  review: {model: ${MODEL}, systemPrompt: "TAG[review]"}\nflow:\n  type: sequential\n  steps: [{agent: plan}, {agent: implement}, {agent: review}]\n`,
    );
    const { c, runId } = await startRun(path, "add impl.txt");
    const done = await c.waitFor(ended(runId), 60_000);
    expect(done, JSON.stringify(done)).toMatchObject({ type: "strategy_completed", result: "LGTM" });

    const review = fake.requests.find((r) => tagOf(r) === "review")!;
    const seen = review.script.lastUserText;
    expect(seen).toContain("IMPLEMENTED impl.txt");
    expect(seen).toMatch(/Changes on branch switchyard\/[a-z-]+\d*: 1 file\(s\), \+1 -0, 1 commit\(s\)/);
    expect(seen).toContain("- impl.txt (A, +1 -0)");
    expect(seen).toContain("+hello from the implementer");

    const frames = c.ofRun(runId);
    expect(frames.filter((f) => f.type === "step_started").map((f) => f.stepName)).toEqual(["plan", "implement", "review"]);
    const cliStream = frames.filter((f) => f.type === "agent_streaming" && f.agentName === "implement").map((f) => (f.event as { type: string }).type);
    expect(cliStream).toEqual(expect.arrayContaining(["step-start", "tool-call", "tool-result", "text", "done"]));
    expect(frames.find((f) => f.type === "agent_output" && f.agentName === "implement")).toMatchObject({ model: "cli/fake" });

    const spawned = (await runEvents(runId)).find((e) => e.type === "run.cli_agent_started");
    const agentId = (spawned?.payload as { agentId: string }).agentId;
    const agent = await t.client.agents.get.query({ agentId });
    expect(agent).toMatchObject({ phaseId: runId, taskId: "implement", provider: "fake", status: "idle" });
    expect(agent.task).toContain("Implement this: Plan: write impl.txt.");
    expect(git(repo, "show", `${agent.branch}:impl.txt`)).toBe("hello from the implementer");

    // continue_run: the CLI step sends its follow-up to the same agent session, in the same worktree
    expect((await c.request({ type: "prepare_run", runId })).type).toBe("run_prepared");
    c.send({ type: "continue_run", runId, input: "also add a test", requestId: `cont-${runId}` });
    const err = await c.waitFor((f) => f.type === "error" || (ended(runId)(f) && f.requestId === `cont-${runId}`), 60_000);
    expect(err.type, JSON.stringify(err)).not.toBe("error");
    const again = await c.waitFor((f) => ended(runId)(f) && f.requestId === `cont-${runId}`, 60_000);
    expect(again, JSON.stringify(again)).toMatchObject({ type: "strategy_completed" });
    const cliEvents = (await runEvents(runId)).filter((e) => e.type === "run.cli_agent_started").map((e) => (e.payload as { agentId: string }).agentId);
    expect(cliEvents).toEqual([agentId, agentId]);
    const resumed = await t.client.agents.get.query({ agentId });
    expect(resumed.sessionNumber).toBeGreaterThanOrEqual(2);
    expect(resumed.sessionId).toBe(agent.sessionId);
  });

  it("the hand-over survives cleanup removing the worktree while the summary reads it (forced: the read waits for the removal)", async () => {
    const implScript = script([...commitStep("raced.txt", "written before the cleanup\n"), { done: "IMPLEMENTED raced.txt" }]);
    fake.setHandler((req) => (tagOf(req) === "review" ? "LGTM" : undefined));
    const path = strategy(
      "cleanup-race",
      `name: Cleanup race\nversion: "1"\nagents:\n  implement: {type: cli, provider: fake}\n  review: {model: ${MODEL}, systemPrompt: "TAG[review]"}\nflow:\n  type: sequential\n  steps: [{agent: implement}, {agent: review}]\n`,
    );
    // the summary begun at the CLI's result line is held until cleanup has removed the worktree
    const held: string[] = [];
    workspaceTestHooks.beforeWorktreeRead = async (worktree) => {
      held.push(worktree);
      for (const until = Date.now() + 15_000; existsSync(worktree) && Date.now() < until; ) await new Promise((r) => setTimeout(r, 20));
    };
    try {
      const { c, runId } = await startRun(path, implScript);
      const done = await c.waitFor(ended(runId), 60_000);
      expect(done, JSON.stringify(done)).toMatchObject({ type: "strategy_completed", result: "LGTM" });
      const agentId = ((await runEvents(runId)).find((e) => e.type === "run.cli_agent_started")!.payload as { agentId: string }).agentId;
      const agent = await t.client.agents.get.query({ agentId });
      expect(agent.workspaceRemoved).toBe(true);
      expect(held).toContain(agent.workspacePath);
      expect(existsSync(agent.workspacePath)).toBe(false);

      const seen = fake.requests.findLast((r) => tagOf(r) === "review")!.script.lastUserText;
      expect(seen).toContain("IMPLEMENTED raced.txt");
      expect(seen).not.toContain("unavailable");
      expect(seen).toMatch(/Changes on branch switchyard\/[a-z-]+\d*: 1 file\(s\), \+1 -0, 1 commit\(s\)/);
      expect(seen).toContain("- raced.txt (A, +1 -0)");
      expect(seen).toContain("+written before the cleanup");
    } finally {
      delete workspaceTestHooks.beforeWorktreeRead;
    }
  });

  it("a CLI agent's two questions become two request_question frames; answering both resumes it; stop_run kills another", async () => {
    const asking = script({ steps: [{ questions: [{ id: "db", question: "Which database?" }, { id: "port", question: "Which port?" }] }], resume: [[{ text: "thanks" }, { done: "configured with the answers" }]] });
    const path = strategy("asks", `name: Asks\nversion: "1"\nagents:\n  coder: {type: cli, provider: fake}\nflow: {type: sequential, steps: [{agent: coder}]}\n`);
    const { c, runId } = await startRun(path, asking);
    const q1 = await c.waitFor((f) => f.runId === runId && f.type === "request_question", 30_000);
    const q2 = await c.waitFor((f) => f.runId === runId && f.type === "request_question" && f.requestId !== q1.requestId, 30_000);
    expect([q1.question, q2.question].sort()).toEqual(["Which database?", "Which port?"]);
    expect(q1).toMatchObject({ agentName: "coder", toolName: "fake:question" });
    const answer = (q: Frame) => (q.question === "Which database?" ? "postgres" : "5432");
    c.send({ type: "question_response", runId, questionRequestId: q1.requestId, response: answer(q1) });
    await new Promise((r) => setTimeout(r, 300));
    const agentId = ((await runEvents(runId)).find((e) => e.type === "run.cli_agent_started")!.payload as { agentId: string }).agentId;
    expect((await t.client.agents.get.query({ agentId })).status).toBe("waiting_for_input"); // one answer is not enough
    c.send({ type: "question_response", runId, questionRequestId: q2.requestId, response: answer(q2) });
    const done = await c.waitFor(ended(runId), 30_000);
    expect(done).toMatchObject({ type: "strategy_completed" });
    expect(done.result).toContain("configured with the answers");
    const log = await t.client.agents.output.query({ agentId, fromLine: 0, limit: 200, format: "raw" });
    const answers = log.lines.map((l) => l.raw ?? "").join("\n");
    expect(answers).toContain("postgres");
    expect(answers).toContain("5432");

    // stop_run stops the run's CLI agent: its process is gone and it is stopped
    const { c: c2, runId: run2 } = await startRun(path, script([{ text: "working a long time" }, { sleep: 60_000 }, { done: "never" }]));
    await c2.waitFor((f) => f.runId === run2 && f.type === "agent_streaming" && f.agentName === "coder" && (f.event as { type: string }).type === "text", 30_000);
    const running = ((await runEvents(run2)).find((e) => e.type === "run.cli_agent_started")!.payload as { agentId: string }).agentId;
    const pid = (await t.client.agents.get.query({ agentId: running })).pid!;
    expect(pid).toBeGreaterThan(0);
    c2.send({ type: "stop_run", runId: run2 });
    const stopped = await c2.waitFor(ended(run2), 30_000);
    expect(stopped).toMatchObject({ type: "strategy_error", error: { code: "CANCELLED" } });
    await expect.poll(async () => (await t.client.agents.get.query({ agentId: running })).status, { timeout: 10_000 }).toBe("stopped");
    expect(() => process.kill(pid, 0)).toThrow();
  });

  it("a CLI step's question shows once in the Inbox (as the run's); answered on the agent's page instead, the run goes on", async () => {
    const asking = script({ steps: [{ questions: [{ id: "env", question: "Which environment?" }] }], resume: [[{ done: "deployed where told" }]] });
    const path = strategy("asks-once", `name: Asks once\nversion: "1"\nagents:\n  coder: {type: cli, provider: fake}\nflow: {type: sequential, steps: [{agent: coder}]}\n`);
    const { c, runId } = await startRun(path, asking);
    await c.waitFor((f) => f.runId === runId && f.type === "request_question", 30_000);
    const agentId = ((await runEvents(runId)).find((e) => e.type === "run.cli_agent_started")!.payload as { agentId: string }).agentId;
    await expect.poll(async () => (await t.client.agents.get.query({ agentId })).status).toBe("waiting_for_input");
    const inbox = (await t.client.inbox.list.query()).items.filter((i) => JSON.stringify(i).includes("Which environment?"));
    expect(inbox.map((i) => i.kind)).toEqual(["run_request"]);
    await t.client.agents.resume.mutate({ agentId, answers: { env: "staging" } });
    const done = await c.waitFor(ended(runId), 30_000);
    expect(done, JSON.stringify(done)).toMatchObject({ type: "strategy_completed" });
    expect(done.result).toContain("deployed where told");
    expect((await t.client.inbox.list.query()).items.filter((i) => JSON.stringify(i).includes("Which environment?"))).toEqual([]);
  });

  it("a CLI agent's tool approval (ask mode) is a request_permission; a crash fails the run with the reason", async () => {
    const asks = script([{ permission: { tool: "Bash", input: { command: "echo approved > approved.txt" } } }, { done: "ran the approved command" }]);
    const path = strategy("approve", `name: Approve\nversion: "1"\nagents:\n  coder: {type: cli, provider: fake, permissionMode: ask}\nflow: {type: sequential, steps: [{agent: coder}]}\n`);
    const { c, runId } = await startRun(path, asks);
    const perm = await c.waitFor((f) => f.runId === runId && f.type === "request_permission", 30_000);
    expect(perm).toMatchObject({ agentName: "coder", toolName: "Bash", operation: "fs.exec", resource: "echo approved > approved.txt" });
    c.send({ type: "permission_decision", runId, permissionRequestId: perm.requestId, decision: "allow" });
    const done = await c.waitFor(ended(runId), 30_000);
    expect(done, JSON.stringify(done)).toMatchObject({ type: "strategy_completed" });
    expect(done.result).toContain("ran the approved command");
    expect(done.result).toContain("approved.txt");

    const crashing = await startRun(path, script([{ text: "about to fail" }, { crash: 3 }]));
    const failed = await crashing.c.waitFor(ended(crashing.runId), 30_000);
    expect(failed).toMatchObject({ type: "strategy_error", error: { code: "EXECUTION_ERROR" } });
    expect((failed.error as { message: string }).message).toMatch(/CLI agent [a-z-]+\d* \(fake\) of step "coder" crashed/);
  });

  it("best-of-3 broadcast: three worktrees; the reviewer gets all three summaries; the one without changes is cleaned up", async () => {
    fake.setHandler((req) => (tagOf(req) === "judge" ? "coder2 wins" : undefined));
    const def = (n: number, s: string) => `  coder${n}:\n    type: cli\n    provider: fake\n    promptTemplate: ${JSON.stringify(`{{input}}\n${s}`)}\n`;
    const path = strategy(
      "best-of-3",
      `name: Best of three\nversion: "1"\nagents:\n${def(1, script([...commitStep("one.txt", "1\n"), { done: "option one" }]))}${def(2, script([...commitStep("two.txt", "2\n"), { done: "option two" }]))}${def(3, script([{ text: "nothing to do" }, { done: "no change needed" }]))}  judge: {model: ${MODEL}, systemPrompt: "TAG[judge]"}\nflow:\n  type: sequential\n  steps:\n    - type: broadcast\n      steps: [{agent: coder1}, {agent: coder2}, {agent: coder3}]\n    - agent: judge\n`,
    );
    const { c, runId } = await startRun(path, "Solve it.");
    const done = await c.waitFor(ended(runId), 60_000);
    expect(done, JSON.stringify(done)).toMatchObject({ type: "strategy_completed", result: "coder2 wins" });
    const judged = fake.requests.find((r) => tagOf(r) === "judge")!.script.lastUserText;
    expect(judged).toContain("option one");
    expect(judged).toContain("+1");
    expect(judged).toContain("option two");
    expect(judged).toContain("no change needed");
    expect(judged).toContain("Changes: none");

    const spawned = (await runEvents(runId)).filter((e) => e.type === "run.cli_agent_started").map((e) => e.payload as { agentId: string; agentName: string });
    expect(spawned.map((s) => s.agentName).sort()).toEqual(["coder1", "coder2", "coder3"]);
    const agents = await Promise.all(spawned.map((s) => t.client.agents.get.query({ agentId: s.agentId })));
    expect(new Set(agents.map((a) => a.workspacePath)).size).toBe(3);
    const byName = Object.fromEntries(spawned.map((s, i) => [s.agentName, agents[i]!]));
    // the agent with no changes: worktree and branch gone; the others keep their branches
    await expect.poll(async () => (await t.client.agents.get.query({ agentId: byName.coder3!.id })).workspaceRemoved).toBe(true);
    expect(existsSync(byName.coder3!.workspacePath)).toBe(false);
    expect(git(repo, "branch", "--list", byName.coder3!.branch!)).toBe("");
    expect(git(repo, "show", `${byName.coder1!.branch}:one.txt`)).toBe("1");
    expect(git(repo, "show", `${byName.coder2!.branch}:two.txt`)).toBe("2");
  });

  it("the same with the real claude CLI writing a file in its worktree", async () => {
    const SIGNAL_RE = /(\/[^\s"`\\]+)\/\.switchyard\/output\/signal\.json/;
    let turn = 0;
    fake.setHandler((req): FakeReplyInput | undefined => {
      const tag = tagOf(req);
      if (tag === "review") return "reviewed";
      if (req.api !== "anthropic" || !req.script.offeredTools.includes("Write")) return undefined;
      const ws = SIGNAL_RE.exec(JSON.stringify(req.body))?.[1];
      if (!ws) return "no workspace";
      turn++;
      if (turn === 1) return { kind: "turn", text: "Writing.", toolCalls: [{ name: "Write", input: { file_path: join(ws, "real.txt"), content: "written by the real claude\n" } }] };
      if (turn === 2) return { kind: "turn", text: "Done.", toolCalls: [{ name: "Write", input: { file_path: join(ws, ".switchyard", "output", "signal.json"), content: JSON.stringify({ status: "done", result: { message: "REAL CLAUDE wrote real.txt" } }) } }] };
      return "All done.";
    });
    const path = strategy(
      "real-claude-step",
      `name: Real claude step\nversion: "1"\nagents:\n  implement: {type: cli, provider: claude, permissionMode: acceptEdits}\n  review: {model: ${MODEL}, systemPrompt: "TAG[review]"}\nflow: {type: sequential, steps: [{agent: implement}, {agent: review}]}\n`,
    );
    const { c, runId } = await startRun(path, "Create real.txt");
    const done = await c.waitFor(ended(runId), 120_000);
    expect(done, JSON.stringify(done)).toMatchObject({ type: "strategy_completed", result: "reviewed" });
    const seen = fake.requests.findLast((r) => tagOf(r) === "review")!.script.lastUserText;
    expect(seen).toContain("REAL CLAUDE wrote real.txt");
    expect(seen).toContain("real.txt");
    const agentId = ((await runEvents(runId)).find((e) => e.type === "run.cli_agent_started")!.payload as { agentId: string }).agentId;
    const agent = await t.client.agents.get.query({ agentId });
    expect(agent.provider).toBe("claude");
    // claude did not commit: cleanup asked it once (the fake model answers that turn), the file is on its branch or in its worktree
    const changes = await t.client.agents.changes.query({ agentId });
    expect(changes.files.map((f) => f.path)).toContain("real.txt");
    const frames = c.ofRun(runId).filter((f) => f.type === "agent_streaming" && f.agentName === "implement");
    expect(frames.some((f) => (f.event as { type: string; toolName?: string }).type === "tool-call" && (f.event as { toolName?: string }).toolName === "Write")).toBe(true);
  });

  it("a token budget stops the run at the step that crosses it, with BUDGET_EXCEEDED", async () => {
    fake.setHandler((req): FakeReplyInput | undefined => (tagOf(req) ? { kind: "turn", text: `${tagOf(req)} done`, usage: { inputTokens: 10, outputTokens: 10 } } : undefined));
    const path = strategy(
      "budget",
      `name: Budget\nversion: "1"\nbudget: {tokens: 50}\nagents:\n  a: {model: ${MODEL}, systemPrompt: "TAG[a]"}\n  b: {model: ${MODEL}, systemPrompt: "TAG[b]"}\n  c: {model: ${MODEL}, systemPrompt: "TAG[c]"}\n  d: {model: ${MODEL}, systemPrompt: "TAG[d]"}\nflow: {type: sequential, steps: [{agent: a}, {agent: b}, {agent: c}, {agent: d}]}\n`,
    );
    const { c, runId } = await startRun(path, "go");
    const done = await c.waitFor(ended(runId), 30_000);
    expect(done).toMatchObject({ type: "strategy_error", error: { code: "BUDGET_EXCEEDED" } });
    expect((done.error as { message: string }).message).toContain('over its budget of 50: stopped after agent "c"');
    expect(fake.requests.filter((r) => tagOf(r) === "d")).toHaveLength(0);
    const spend = (await runEvents(runId)).filter((e) => e.type === "run.spend_updated").map((e) => (e.payload as { tokens: number }).tokens);
    expect(spend).toEqual([20, 40, 60]);
    // priced by the table: claude-sonnet-4* at $3 / $15 per million, 30 tokens in and 30 out
    const listed = (await t.client.runs.list.query({})).items.find((r) => r.runId === runId);
    expect(listed?.costUsd).toBeCloseTo((30 * 3 + 30 * 15) / 1e6, 8);
  });

  it("a CLI step's spend counts the helpers its agent spawned (its tree)", async () => {
    // an unscripted fake agent writes a notes file and finishes; `yard` inside an agent uses its own token
    const implScript = script([
      { bash: 'yard agent spawn --provider fake --prompt "Note the plan for the helper" --json > .switchyard/spawned.json' },
      { sleep: 2500 },
      { done: "spawned a helper" },
    ]);
    fake.setHandler((req) => (tagOf(req) === "plan" ? `Plan.\n${implScript}` : undefined));
    const path = strategy("tree-spend", `name: Tree spend\nversion: "1"\nagents:\n  plan: {model: ${MODEL}, systemPrompt: "TAG[plan]"}\n  implement:\n    type: cli\n    provider: fake\n    promptTemplate: "{{input}}"\nflow:\n  type: sequential\n  steps: [{agent: plan}, {agent: implement}]\n`);
    const { c, runId } = await startRun(path, "go");
    const end = await c.waitFor(ended(runId), 60_000);
    expect(end, JSON.stringify(end)).toMatchObject({ type: "strategy_completed" });
    const events = await runEvents(runId);
    const parentId = (events.find((e) => e.type === "run.cli_agent_started")?.payload as { agentId: string }).agentId;
    const parent = await t.client.agents.get.query({ agentId: parentId });
    const helpers = (await t.client.agents.list.query()).items.filter((a) => a.parentAgentId === parentId);
    expect(helpers).toHaveLength(1);
    const helper = await t.client.agents.get.query({ agentId: helpers[0]!.id });
    expect(helper.usage.inputTokens).toBeGreaterThan(0);
    const step = events.find((e) => e.type === "run.agent_responded" && (e.payload as { agentName: string }).agentName === "implement")?.payload as { usage: { promptTokens: number; completionTokens: number } };
    expect(step.usage.promptTokens).toBe(parent.usage.inputTokens + helper.usage.inputTokens);
    expect(step.usage.completionTokens).toBe(parent.usage.outputTokens + helper.usage.outputTokens);
  });
});
