import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { CommaClient, type Frame } from "../testing/comma-client";
import { startFakeModelServer, type FakeModelServer } from "../testing/fake-model";
import { removeHome, startTestServer, tempHome, type TestServer } from "../testing/server-harness";

/**
 * The Comma protocol on /ws, end to end against the fake model: nested flows, tools and their
 * permissions, questions, steering, stop during a command, several clients, listings and errors.
 * Everything is asserted on the frames a client receives.
 */

const MODEL = "anthropic/claude-sonnet-4-5";

let fake: FakeModelServer;
let t: TestServer;
let cwd: string;
let outside: string;
const clients: CommaClient[] = [];
const dirs: string[] = [];

function strategy(name: string, body: string): string {
  const path = join(cwd, "strategies", `${name}.yaml`);
  writeFileSync(path, body);
  return path;
}

function dir(prefix: string): string {
  const d = tempHome(prefix);
  dirs.push(d);
  return d;
}

async function connect(): Promise<CommaClient> {
  const c = await CommaClient.connect(t.url);
  clients.push(c);
  return c;
}

beforeAll(async () => {
  fake = await startFakeModelServer();
  t = await startTestServer({ env: { ANTHROPIC_BASE_URL: fake.url, ANTHROPIC_API_KEY: "k" } });
  cwd = tempHome("switchyard-proto-cwd-");
  outside = tempHome("switchyard-proto-outside-");
  mkdirSync(join(cwd, "strategies"));
  writeFileSync(join(outside, "secret.txt"), "outside text");
});

afterEach(() => {
  fake.setHandler(undefined);
  for (const c of clients.splice(0)) c.close();
});

afterAll(async () => {
  await t.stop();
  await fake.close();
  removeHome(t.home);
  removeHome(cwd);
  removeHome(outside);
  for (const d of dirs) removeHome(d);
});

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const ended = (runId: string) => (f: Frame) => f.runId === runId && (f.type === "strategy_completed" || f.type === "strategy_error");
const streamOf = (f: Frame) => f.event as { type: string; [k: string]: unknown };
const isStream = (runId: string, type: string) => (f: Frame) => f.runId === runId && f.type === "agent_streaming" && streamOf(f).type === type;
const endsOf = (c: CommaClient, runId: string) => c.ofRun(runId).filter((f) => f.type === "strategy_completed" || f.type === "strategy_error");

async function prepare(c: CommaClient, path: string, extra: Record<string, unknown> = {}): Promise<string> {
  const prepared = await c.request({ type: "prepare_run", strategyPath: path, cwd, ...extra });
  expect(prepared.type, JSON.stringify(prepared)).toBe("run_prepared");
  return prepared.runId as string;
}

async function startRun(c: CommaClient, path: string, input: string, extra: Record<string, unknown> = {}): Promise<string> {
  const runId = await prepare(c, path, extra);
  c.send({ type: "start_run", runId, input, requestId: `start-${runId}` });
  return runId;
}

/** Alive and not a zombie (a killed child may linger as a zombie until it is reaped). */
function isRunning(pid: number): boolean {
  try {
    process.kill(pid, 0);
  } catch {
    return false;
  }
  try {
    return readFileSync(`/proc/${pid}/stat`, "utf8").split(") ")[1]?.startsWith("Z") !== true;
  } catch {
    return false;
  }
}

describe("Comma protocol: flows", () => {
  it("runs a broadcast inside a cycle inside a sequential: step order, joined output, final result", async () => {
    // each agent answers with its tag around the input it received
    fake.setHandler((req) => {
      const tag = /TAG\[(\w+)\]/.exec(req.script.system)?.[1];
      return tag ? `${tag}<${req.script.lastUserText}>` : undefined;
    });
    const path = strategy(
      "nested",
      `name: Nested\nversion: "1.0"\nagents:\n  a: {model: ${MODEL}, systemPrompt: "TAG[a]"}\n  b: {model: ${MODEL}, systemPrompt: "TAG[b]"}\n  final: {model: ${MODEL}, systemPrompt: "TAG[f]"}\nflow:\n  type: sequential\n  steps:\n    - type: cycle\n      cycles: 2\n      steps:\n        - type: broadcast\n          separator: " + "\n          steps: [{agent: a}, {agent: b}]\n    - agent: final\n`,
    );
    const c = await connect();
    const runId = await startRun(c, path, "go");
    const done = await c.waitFor(ended(runId));

    const pass1 = "a<go> + b<go>";
    const pass2 = `a<${pass1}> + b<${pass1}>`;
    expect(done).toMatchObject({ type: "strategy_completed", result: `f<${pass2}>`, requestId: `start-${runId}` });
    const frames = c.ofRun(runId);
    // as the reference: step events for the top flow's own steps only (a nested flow is one step,
    // named by the flow); a flow's result has no contextUsage, an LLM step's has
    const starts = frames.filter((f) => f.type === "step_started");
    expect(starts.map((f) => [f.stepName, f.message])).toEqual([
      ["cycle", "go"],
      ["final", pass2],
    ]);
    const completions = frames.filter((f) => f.type === "step_completed");
    expect(completions.map((f) => f.stepName)).toEqual(["cycle", "final"]);
    expect(completions[0]).toMatchObject({ result: { text: pass2, usage: { promptTokens: 40, completionTokens: 20 }, finishReason: "stop" } });
    expect(completions[0]!.result).not.toHaveProperty("contextUsage");
    expect(completions[1]).toMatchObject({ result: { text: `f<${pass2}>`, finishReason: "stop", contextUsage: { inputTokens: 10, totalTokens: expect.any(Number) } } });
    // the broadcast's agents come in declaration order on /ws, a pass after the other
    expect(frames.filter((f) => f.type === "agent_output").map((f) => f.agentName)).toEqual(["a", "b", "a", "b", "final"]);
    expect(frames.filter((f) => f.type === "agent_output")).toHaveLength(5);
    expect(frames[1]).toMatchObject({ type: "strategy_started", strategyName: "Nested", agents: ["a", "b", "final"] });
    expect(endsOf(c, runId)).toHaveLength(1);
  });
});

describe("Comma protocol: tools and permissions", () => {
  const readOutside = () => `'USE_TOOL[read_file]{"path":"${join(outside, "secret.txt")}"}'`;
  const twoReads = (name: string) =>
    strategy(name, `name: ${name}\nversion: "1.0"\nagents:\n  r1: {model: ${MODEL}, tools: [read_file], systemPrompt: ${readOutside()}}\n  r2: {model: ${MODEL}, tools: [read_file], systemPrompt: ${readOutside()}}\nflow: {type: sequential, steps: [{agent: r1}, {agent: r2}]}\n`);
  const toolResults = (c: CommaClient, runId: string) => c.ofRun(runId).filter(isStream(runId, "tool-result")).map((f) => streamOf(f) as unknown as { output: string; status: string; toolName: string });

  it("allow-session: the second identical read in the run is not asked again, and policy_updated arrives", async () => {
    const c = await connect();
    const runId = await startRun(c, twoReads("allow-session"), "read twice");
    const ask = await c.waitFor((f) => f.runId === runId && f.type === "request_permission");
    expect(ask).toMatchObject({ agentName: "r1", toolName: "read_file", operation: "fs.read", reason: "policy-ask", resource: join(outside, "secret.txt") });
    c.send({ type: "permission_decision", runId, permissionRequestId: ask.requestId, decision: "allow-session" });
    const done = await c.waitFor(ended(runId));
    expect(done.type).toBe("strategy_completed");
    expect(c.ofRun(runId).filter((f) => f.type === "request_permission")).toHaveLength(1);
    expect(c.ofRun(runId).find((f) => f.type === "policy_updated")).toMatchObject({ runId, tool: "read_file" });
    const results = toolResults(c, runId);
    expect(results).toHaveLength(2);
    for (const r of results) expect(r).toMatchObject({ status: "completed", toolName: "read_file" });
    for (const r of results) expect(r.output).toContain("outside text");
  });

  it("deny-session: the second identical read is denied without asking", async () => {
    const c = await connect();
    const runId = await startRun(c, twoReads("deny-session"), "read twice");
    const ask = await c.waitFor((f) => f.runId === runId && f.type === "request_permission");
    c.send({ type: "permission_decision", runId, permissionRequestId: ask.requestId, decision: "deny-session" });
    expect(await c.waitFor(ended(runId))).toMatchObject({ type: "strategy_completed" });
    expect(c.ofRun(runId).filter((f) => f.type === "request_permission")).toHaveLength(1);
    expect(c.ofRun(runId).some((f) => f.type === "policy_updated")).toBe(true);
    const results = toolResults(c, runId);
    expect(results).toHaveLength(2);
    for (const r of results) {
      expect(r.status).toBe("completed");
      expect(r.output).toMatch(/^fs\.read access denied (by user )?for "/);
      expect(r.output).not.toContain("outside text");
    }
  });

  it("update_policy on a prepared run answers policy_updated, and then a read outside the cwd is not asked", async () => {
    const c = await connect();
    const path = strategy("policy", `name: Policy\nversion: "1.0"\nagents:\n  x: {model: ${MODEL}, tools: [read_file], systemPrompt: ${readOutside()}}\nflow: {type: sequential, steps: [{agent: x}]}\n`);
    const runId = await prepare(c, path);
    // as the reference: to the run's subscribers, without a requestId; the chain by name
    c.send({ type: "update_policy", runId, mode: "read", default: "allow", requestId: "pol-1" });
    const updated = await c.waitFor((f) => f.runId === runId && f.type === "policy_updated");
    expect(updated).toEqual({ type: "policy_updated", runId, tool: "*", policies: [{ name: "read-path-policy" }], ts: expect.any(String) });
    // a pattern that does not parse is refused, naming it, and the policy is left as it was
    const refused = await c.request({ type: "update_policy", runId, mode: "read", deny: ["*.{env,pem"] });
    expect(refused).toMatchObject({ type: "error", code: "BAD_INPUT", message: 'deny rule of every tool (read): invalid glob "*.{env,pem": "{" is never closed by "}" (write \\{ to match it literally)' });
    c.send({ type: "start_run", runId, input: "read it" });
    expect(await c.waitFor(ended(runId))).toMatchObject({ type: "strategy_completed" });
    expect(c.ofRun(runId).filter((f) => f.type === "request_permission")).toHaveLength(0);
    const results = toolResults(c, runId);
    expect(results).toHaveLength(1);
    expect(results[0]!.output).toContain("outside text");
  });

  it("update_policy on a running run: subscribers get policy_updated once, another client gets a direct reply", async () => {
    const c = await connect();
    const other = await connect();
    const path = strategy("policy-live", `name: PolicyLive\nversion: "1.0"\nagents:\n  x: {model: ${MODEL}, tools: [read_file], systemPrompt: ${readOutside()}}\nflow: {type: sequential, steps: [{agent: x}]}\n`);
    const runId = await startRun(c, path, "read it");
    const ask = await c.waitFor((f) => f.runId === runId && f.type === "request_permission");
    c.send({ type: "update_policy", runId, tool: "read_file", mode: "read", deny: ["/nowhere/**"], requestId: "policy-1" });
    const live = await c.waitFor((f) => f.runId === runId && f.type === "policy_updated");
    // the subscribed client gets the frame from the event (as the reference, no requestId)
    expect(live).toEqual({ type: "policy_updated", runId, tool: "read_file", policies: [{ name: "read-path-policy" }], ts: expect.any(String) });
    other.send({ type: "update_policy", runId, mode: "write", default: "deny" });
    const direct = await other.waitFor((f) => f.runId === runId && f.type === "policy_updated");
    expect(direct).toMatchObject({ type: "policy_updated", runId, tool: "*", policies: [{ name: "write-path-policy" }] });
    c.send({ type: "permission_decision", runId, permissionRequestId: ask.requestId, decision: "deny" });
    expect(await c.waitFor(ended(runId))).toMatchObject({ type: "strategy_completed" });
    expect(c.ofRun(runId).filter((f) => f.type === "policy_updated")).toHaveLength(2);
    expect(other.ofRun(runId).filter((f) => f.type === "policy_updated")).toHaveLength(1);
    expect(await c.request({ type: "update_policy", runId: "no-such-run", mode: "read", default: "allow" })).toMatchObject({ type: "error", code: "RUN_NOT_FOUND" });
  });

  it("ask_question: request_question, a wrong id is refused, the answer becomes the tool result", async () => {
    const c = await connect();
    const path = strategy("question", `name: Question\nversion: "1.0"\nagents:\n  asker: {model: ${MODEL}, tools: [ask_question], systemPrompt: 'USE_TOOL[ask_question]{"question":"Which colour?"}'}\nflow: {type: sequential, steps: [{agent: asker}]}\n`);
    const before = fake.requests.length;
    const runId = await startRun(c, path, "ask me");
    const q = await c.waitFor((f) => f.runId === runId && f.type === "request_question");
    expect(q).toMatchObject({ runId, agentName: "asker", toolName: "ask_question", question: "Which colour?" });
    expect(typeof q.requestId).toBe("string");
    const wrong = await c.request({ type: "question_response", runId, questionRequestId: "not-the-id", response: "Red" });
    expect(wrong).toMatchObject({ type: "error", code: "NO_PENDING_QUESTION" });
    c.send({ type: "question_response", runId, questionRequestId: q.requestId, response: "Cobalt blue" });
    const done = await c.waitFor(ended(runId));
    expect(done).toMatchObject({ type: "strategy_completed", result: "Tool finished: Cobalt blue" });
    const reqs = fake.requests.slice(before);
    expect(reqs).toHaveLength(2);
    expect(reqs[1]!.script.toolResult).toBe("Cobalt blue");
    expect(JSON.stringify(reqs[1]!.body.messages)).toContain("Cobalt blue");
    const again = await c.request({ type: "question_response", runId, questionRequestId: q.requestId, response: "late" });
    expect(again).toMatchObject({ type: "error", code: "NO_PENDING_QUESTION" });
  });

  it("run_command runs without asking; stop during it: CANCELLED exactly once and the command's child process is killed", async () => {
    const work = dir("switchyard-proto-cmd-");
    const c = await connect();
    const path = strategy("command", `name: Command\nversion: "1.0"\nagents:\n  sh: {model: ${MODEL}, tools: [run_command], systemPrompt: 'USE_TOOL[run_command]{"command":"sleep 30 & echo $! > pid.txt; wait"}'}\nflow: {type: sequential, steps: [{agent: sh}]}\n`);
    const runId = await startRun(c, path, "run it", { cwd: work });
    const pidFile = join(work, "pid.txt");
    const deadline = Date.now() + 5000;
    while (!(existsSync(pidFile) && readFileSync(pidFile, "utf8").trim() !== "") && Date.now() < deadline) await sleep(20);
    const pid = Number(readFileSync(pidFile, "utf8").trim());
    expect(pid).toBeGreaterThan(1);
    expect(isRunning(pid)).toBe(true);

    c.send({ type: "stop_run", runId });
    expect(await c.waitFor(ended(runId))).toMatchObject({ type: "strategy_error", error: { code: "CANCELLED" } });
    const gone = Date.now() + 5000;
    while (isRunning(pid) && Date.now() < gone) await sleep(50);
    expect(isRunning(pid)).toBe(false);
    await sleep(200);
    expect(endsOf(c, runId)).toHaveLength(1);
    expect(c.ofRun(runId).filter((f) => f.type === "request_permission")).toHaveLength(0);
  });
});

describe("Comma protocol: run_command approval", () => {
  const toolResults = (c: CommaClient, runId: string) => c.ofRun(runId).filter(isStream(runId, "tool-result")).map((f) => streamOf(f) as unknown as { output: string });
  const echo = (name: string, extra = "") =>
    strategy(name, `name: ${name}\nversion: "1.0"\n${extra}agents:\n  sh: {model: ${MODEL}, tools: [run_command], systemPrompt: 'USE_TOOL[run_command]{"command":"echo approved"}'}\nflow: {type: sequential, steps: [{agent: sh}]}\n`);

  it("a strategy's permissions make every command ask; the answer decides", async () => {
    const c = await connect();
    const runId = await startRun(c, echo("ask-commands", "permissions: {run_command: ask}\n"), "run it");
    const ask = await c.waitFor((f) => f.runId === runId && f.type === "request_permission");
    expect(ask).toMatchObject({ operation: "fs.exec", toolName: "run_command", resource: "echo approved", reason: "policy-ask" });
    c.send({ type: "permission_decision", runId, permissionRequestId: ask.requestId, decision: "allow" });
    await c.waitFor(ended(runId));
    expect(toolResults(c, runId)[0]!.output).toMatch(/^Ran `echo approved` in .* \(\d+ms\)\.\n\nSTATUS: SUCCESS — exit code 0\n\nSTDOUT:\napproved\n$/);
    // on the timeline: the command, decided by a human
    const ran = (await t.client.runs.timeline.query({ runId })).events.find((e: { type: string }) => e.type === "run.command_ran");
    expect(ran).toMatchObject({ payload: { command: "echo approved", decision: "human", exitCode: 0 } });
  });

  it("SWITCHYARD_RUN_COMMAND=ask makes every command ask on that server", async () => {
    const strict = await startTestServer({ env: { ANTHROPIC_BASE_URL: fake.url, ANTHROPIC_API_KEY: "k", SWITCHYARD_RUN_COMMAND: "ask" } });
    const c = await CommaClient.connect(strict.url);
    try {
      const prepared = await c.request({ type: "prepare_run", strategyPath: echo("server-ask"), cwd });
      const runId = prepared.runId as string;
      c.send({ type: "start_run", runId, input: "go" });
      const ask = await c.waitFor((f) => f.runId === runId && f.type === "request_permission");
      c.send({ type: "permission_decision", runId, permissionRequestId: ask.requestId, decision: "deny" });
      await c.waitFor(ended(runId));
      expect(toolResults(c, runId)[0]!.output).toBe('command.execute access denied by user for "echo approved".');
    } finally {
      c.close();
      await strict.stop();
      removeHome(strict.home);
    }
  });
});

describe("Comma protocol: failures and stops inside a broadcast", () => {
  const fan = (name: string, left: string, right = "LONG[200] DELAY[10]") =>
    strategy(name, `name: ${name}\nversion: "1.0"\nagents:\n  left: {model: ${MODEL}, systemPrompt: "${left}"}\n  right: {model: ${MODEL}, systemPrompt: "${right}"}\nflow: {type: broadcast, steps: [{agent: left}, {agent: right}]}\n`);
  const failLeft = () => fake.setHandler((req) => (req.script.system.includes("FAIL") ? { kind: "http-error", status: 400, message: "bad branch", firstByteDelayMs: 200 } : undefined));

  it("a failing branch ends the run with EXECUTION_ERROR and aborts the other branch", async () => {
    failLeft();
    const c = await connect();
    const before = fake.requests.length;
    const runId = await startRun(c, fan("fan-fail", "FAIL"), "go");
    const end = await c.waitFor(ended(runId));
    expect(end).toMatchObject({ type: "strategy_error", error: { code: "EXECUTION_ERROR" } });
    expect((end.error as { message: string }).message).toMatch(/bad branch/);
    await fake.waitForIdle(5000);
    expect(fake.requests.slice(before).find((r) => r.script.system.includes("LONG"))?.aborted).toBe(true);
    await sleep(200);
    expect(endsOf(c, runId)).toHaveLength(1);
    expect(c.ofRun(runId).some((f) => f.type === "step_completed")).toBe(false);
  });

  it("stop during a broadcast aborts both model calls; CANCELLED exactly once", async () => {
    const c = await connect();
    const before = fake.requests.length;
    const runId = await startRun(c, fan("fan-stop", "LONG[200] DELAY[10]"), "go");
    await fake.waitForRequests(before + 2);
    await c.waitFor(isStream(runId, "text"));
    c.send({ type: "stop_run", runId });
    expect(await c.waitFor(ended(runId))).toMatchObject({ type: "strategy_error", error: { code: "CANCELLED" } });
    await fake.waitForIdle(5000);
    await sleep(200);
    expect(endsOf(c, runId)).toHaveLength(1);
    const reqs = fake.requests.slice(before);
    expect(reqs).toHaveLength(2);
    for (const r of reqs) expect(r.aborted).toBe(true);
  });

  it("stop while the model call waits to be retried ends the run at once, with no further model call", async () => {
    const c = await connect();
    const path = strategy("retry-stop", `name: RetryStop\nversion: "1.0"\nagents:\n  x: {model: ${MODEL}}\nflow: {type: sequential, steps: [{agent: x}]}\n`);
    fake.enqueue({ kind: "http-error", status: 500, message: "try again" });
    const before = fake.requests.length;
    const runId = await startRun(c, path, "go");
    await fake.waitForRequests(before + 1);
    await fake.waitForIdle(5000);
    await sleep(100);
    const stoppedAt = Date.now();
    c.send({ type: "stop_run", runId });
    expect(await c.waitFor(ended(runId))).toMatchObject({ type: "strategy_error", error: { code: "CANCELLED" } });
    expect(Date.now() - stoppedAt).toBeLessThan(1000);
    await sleep(2500);
    expect(fake.requests.length).toBe(before + 1);
    expect(endsOf(c, runId)).toHaveLength(1);
  });

  it("stop while a permission request is open: CANCELLED is the last frame", async () => {
    const c = await connect();
    const path = strategy("perm-stop", `name: PermStop\nversion: "1.0"\nagents:\n  x: {model: ${MODEL}, tools: [read_file], systemPrompt: 'USE_TOOL[read_file]{"path":"${join(outside, "secret.txt")}"}'}\nflow: {type: sequential, steps: [{agent: x}]}\n`);
    const runId = await startRun(c, path, "go");
    const ask = await c.waitFor((f) => f.runId === runId && f.type === "request_permission");
    c.send({ type: "stop_run", runId });
    const end = await c.waitFor(ended(runId));
    expect(end).toMatchObject({ type: "strategy_error", error: { code: "CANCELLED" } });
    await sleep(300);
    expect(c.ofRun(runId).at(-1)).toEqual(end);
    expect(await c.request({ type: "permission_decision", runId, permissionRequestId: ask.requestId, decision: "allow" })).toMatchObject({ type: "error", code: "NO_PENDING_PERMISSION" });
  });

  // BUG (reported): the DeltaBatcher in agent-call.ts keeps streamed text for up to 16 ms; when the
  // call is aborted (stop_run, or a sibling broadcast branch failing) its timer still sends that text
  // after strategy_error. Both scenarios stream fast (DELAY[2]) so text is always pending.
  it("stop during a fast broadcast: strategy_error CANCELLED is the last frame of the run", async () => {
    const c = await connect();
    const path = fan("fan-fast-stop", "LONG[3000] DELAY[2]", "LONG[3000] DELAY[2]");
    for (let i = 0; i < 4; i++) {
      const runId = await startRun(c, path, "go");
      await c.waitFor(isStream(runId, "text"));
      c.send({ type: "stop_run", runId });
      const end = await c.waitFor(ended(runId));
      expect(end).toMatchObject({ type: "strategy_error", error: { code: "CANCELLED" } });
      await sleep(150);
      expect(c.ofRun(runId).slice(c.ofRun(runId).indexOf(end) + 1)).toEqual([]);
    }
  });

  it("a failing broadcast branch: strategy_error EXECUTION_ERROR is the last frame of the run", async () => {
    failLeft();
    const c = await connect();
    const path = fan("fan-fail-fast", "FAIL", "LONG[3000] DELAY[2]");
    for (let i = 0; i < 5; i++) {
      const runId = await startRun(c, path, "go");
      const end = await c.waitFor(ended(runId));
      expect(end).toMatchObject({ type: "strategy_error", error: { code: "EXECUTION_ERROR" } });
      await sleep(150);
      expect(c.ofRun(runId).slice(c.ofRun(runId).indexOf(end) + 1)).toEqual([]);
    }
  });
});

describe("Comma protocol: steering", () => {
  it("steer_run reaches every subscriber, is merged into the next agent call, and is on the timeline", async () => {
    const a = await connect();
    const b = await connect();
    const path = strategy("steer", `name: Steer\nversion: "1.0"\nagents:\n  talker: {model: ${MODEL}, systemPrompt: "LONG[60] DELAY[15]"}\n  second: {model: ${MODEL}, systemPrompt: "SECOND SAY[second done]"}\nflow: {type: sequential, steps: [{agent: talker}, {agent: second}]}\n`);
    const runId = await prepare(a, path);
    b.send({ type: "subscribe", runId });
    expect(await b.request({ type: "ping" })).toMatchObject({ type: "pong" });
    const before = fake.requests.length;
    a.send({ type: "start_run", runId, input: "talk" });
    await a.waitFor(isStream(runId, "text"));
    a.send({ type: "steer_run", runId, text: "Focus on the tests" });
    for (const c of [a, b]) expect(await c.waitFor((f) => f.runId === runId && f.type === "steer_queued")).toMatchObject({ runId, text: "Focus on the tests" });
    expect(await a.waitFor(ended(runId))).toMatchObject({ type: "strategy_completed", result: "second done" });
    // the steer was queued while the first agent streamed, and applied to the second one
    const seen = b.ofRun(runId).map((f) => (f.type === "step_started" || f.type === "step_completed" ? `${f.type}:${String(f.stepName)}` : f.type));
    expect(seen.indexOf("steer_queued")).toBeGreaterThan(seen.indexOf("step_started:talker"));
    expect(seen.indexOf("steer_queued")).toBeLessThan(seen.indexOf("step_completed:talker"));

    const reqs = fake.requests.slice(before);
    expect(reqs).toHaveLength(2);
    expect(reqs[0]!.script.lastUserText).not.toContain("Focus on the tests");
    expect(reqs[1]!.script.system).toContain("SECOND");
    expect(reqs[1]!.script.lastUserText).toContain("Focus on the tests");
    const { events } = await t.client.runs.timeline.query({ runId });
    const applied = events.filter((e) => e.type === "run.steer_applied");
    expect(applied).toHaveLength(1);
    expect(applied[0]!.payload).toMatchObject({ agentName: "second", text: "Focus on the tests" });

    expect(await a.request({ type: "steer_run", runId, text: "too late" })).toMatchObject({ type: "error", code: "RUN_NOT_STEERABLE" });
    expect(b.ofRun(runId).filter((f) => f.type === "steer_queued")).toHaveLength(1);
  });
});

describe("Comma protocol: several clients", () => {
  const longStrategy = () => strategy("live", `name: Live\nversion: "1.0"\nagents:\n  talker: {model: ${MODEL}, systemPrompt: "LONG[50] DELAY[15]"}\nflow: {type: sequential, steps: [{agent: talker}]}\n`);
  const longText = Array.from({ length: 50 }, (_, i) => `t${i} `).join("");

  it("a subscriber receives the same run frames as the owner, live", async () => {
    const a = await connect();
    const b = await connect();
    const runId = await prepare(a, longStrategy());
    b.send({ type: "subscribe", runId });
    expect(await b.request({ type: "ping" })).toMatchObject({ type: "pong" });
    a.send({ type: "start_run", runId, input: "talk", requestId: "a-start" });
    const doneA = await a.waitFor(ended(runId));
    const doneB = await b.waitFor(ended(runId));
    expect(doneA).toMatchObject({ type: "strategy_completed", result: longText, requestId: "a-start" });
    expect(doneB).toEqual(doneA);
    expect(b.ofRun(runId)).toEqual(a.ofRun(runId).filter((f) => f.type !== "run_prepared"));
    expect(b.ofRun(runId).filter(isStream(runId, "text")).length).toBeGreaterThan(10);
  });

  it("unsubscribe stops the frames; subscribe to an unknown run is SUBSCRIBE_ERROR", async () => {
    const a = await connect();
    const b = await connect();
    const runId = await startRun(a, longStrategy(), "talk");
    await a.waitFor(isStream(runId, "text"));
    b.send({ type: "subscribe", runId });
    await b.waitFor(isStream(runId, "text"));
    b.send({ type: "unsubscribe", runId });
    expect(await b.request({ type: "ping" })).toMatchObject({ type: "pong" });
    const cut = b.frames.length;
    expect(await a.waitFor(ended(runId))).toMatchObject({ type: "strategy_completed" });
    await sleep(100);
    expect(b.frames.slice(cut).filter((f) => f.runId === runId)).toEqual([]);
    // what B got is a contiguous slice of what A got
    const got = b.ofRun(runId);
    const all = a.ofRun(runId);
    const at = all.findIndex((f) => JSON.stringify(f) === JSON.stringify(got[0]));
    expect(at).toBeGreaterThan(0);
    expect(all.slice(at, at + got.length)).toEqual(got);

    expect(await b.request({ type: "subscribe", runId: "no-such-run" })).toMatchObject({ type: "error", code: "SUBSCRIBE_ERROR" });
  });

  it("a client that disconnects does not stop its run", async () => {
    const a = await connect();
    const b = await connect();
    const runId = await startRun(a, longStrategy(), "talk");
    b.send({ type: "subscribe", runId });
    await b.waitFor(isStream(runId, "text"));
    a.close();
    expect(await b.waitFor(ended(runId))).toMatchObject({ type: "strategy_completed", result: longText });
    expect(endsOf(b, runId)).toHaveLength(1);
  });
});

describe("Comma protocol: listings", () => {
  it("list_runs filters by cwd, newest first; list_strategies lists the runs in memory", async () => {
    const one = dir("switchyard-proto-one-");
    const two = dir("switchyard-proto-two-");
    const path = strategy("listed", `name: Listed\nversion: "1.0"\nagents:\n  x: {model: ${MODEL}, systemPrompt: "SAY[listed]"}\nflow: {type: sequential, steps: [{agent: x}]}\n`);
    const c = await connect();
    const ids: string[] = [];
    for (const where of [one, two, one]) {
      const runId = await startRun(c, path, "go", { cwd: where });
      expect(await c.waitFor(ended(runId))).toMatchObject({ type: "strategy_completed" });
      ids.push(runId);
      await sleep(5);
    }
    const [first, second, third] = ids as [string, string, string];

    const inOne = await c.request({ type: "list_runs", cwd: one });
    expect(inOne.type).toBe("run_list");
    const runsOne = inOne.runs as Array<Record<string, unknown>>;
    expect(runsOne.map((r) => r.runId)).toEqual([third, first]);
    for (const r of runsOne) expect(r).toMatchObject({ cwd: one, strategyName: "Listed", strategyPath: path, status: "completed" });
    for (const r of runsOne) expect(typeof r.completedAt).toBe("string");
    expect(Date.parse(runsOne[0]!.startedAt as string)).toBeGreaterThanOrEqual(Date.parse(runsOne[1]!.startedAt as string));
    const inTwo = await c.request({ type: "list_runs", cwd: two });
    expect((inTwo.runs as Array<{ runId: string }>).map((r) => r.runId)).toEqual([second]);
    const everything = (await c.request({ type: "list_runs" })).runs as Array<{ runId: string }>;
    const order = ids.map((id) => everything.findIndex((r) => r.runId === id));
    expect(order.every((i) => i >= 0)).toBe(true);
    expect(order).toEqual([...order].sort((x, y) => y - x));

    const pending = await prepare(c, path, { cwd: two });
    const listed = await c.request({ type: "list_strategies" });
    expect(listed.type).toBe("strategy_list");
    const inMemory = listed.runs as Array<Record<string, unknown>>;
    for (const id of ids) expect(inMemory.find((r) => r.runId === id)).toMatchObject({ strategyName: "Listed", status: "completed", completedAt: expect.any(String), startedAt: expect.any(String) });
    const p = inMemory.find((r) => r.runId === pending);
    expect(p).toMatchObject({ strategyName: "Listed", status: "pending" });
    expect(p).not.toHaveProperty("completedAt");
    // a prepared run is not persisted: list_runs does not know it yet
    expect(((await c.request({ type: "list_runs", cwd: two })).runs as Array<{ runId: string }>).map((r) => r.runId)).toEqual([second]);
  });
});

describe("Comma protocol: errors", () => {
  it("answers bad messages and refused operations with stable codes, and the connection stays open", async () => {
    const c = await connect();
    c.send("{not json");
    expect(await c.waitFor((f) => f.type === "error" && f.code === "PARSE_ERROR")).toMatchObject({ message: "Invalid JSON" });

    const badPath = await c.request({ type: "prepare_run", strategyPath: 123, requestId: "v1" });
    expect(badPath).toMatchObject({ type: "error", code: "VALIDATION_ERROR", requestId: "v1" });
    expect(badPath.message).toMatch(/strategyPath/);
    const noInput = await c.request({ type: "continue_run", runId: "r", requestId: "v2" });
    expect(noInput).toMatchObject({ type: "error", code: "VALIDATION_ERROR", requestId: "v2" });
    expect(noInput.message).toMatch(/input/);

    expect(await c.request({ type: "continue_run", runId: "never-prepared", input: "x" })).toMatchObject({ type: "error", code: "CONTINUE_FAILED" });
    const path = strategy("twice", `name: Twice\nversion: "1.0"\nagents:\n  x: {model: ${MODEL}, systemPrompt: "SAY[once]"}\nflow: {type: sequential, steps: [{agent: x}]}\n`);
    const runId = await prepare(c, path);
    expect(await c.request({ type: "continue_run", runId, input: "x" })).toMatchObject({ type: "error", code: "CONTINUE_FAILED" });
    c.send({ type: "start_run", runId, input: "go" });
    const second = await c.request({ type: "start_run", runId, input: "go" });
    expect(second).toMatchObject({ type: "error", code: "START_FAILED" });
    expect(await c.waitFor(ended(runId))).toMatchObject({ type: "strategy_completed", result: "once" });
    expect(endsOf(c, runId)).toHaveLength(1);

    const invalid = strategy("invalid", `name: Invalid\nversion: "1.0"\nagents:\n  x: {model: ${MODEL}, bogusKey: 1}\nflow: {type: sequential, steps: [{agent: x}]}\n`);
    const refused = await c.request({ type: "prepare_run", strategyPath: invalid, cwd });
    expect(refused).toMatchObject({ type: "error", code: "PREPARE_FAILED" });
    expect(refused.message).toMatch(/bogusKey/);

    expect(await c.request({ type: "ping" })).toMatchObject({ type: "pong" });
    expect(c.socket.readyState).toBe(c.socket.OPEN);
  });

  it("a model error ends the run with EXECUTION_ERROR, and the run can be continued", async () => {
    const c = await connect();
    const path = strategy("flaky", `name: Flaky\nversion: "1.0"\nagents:\n  x: {model: ${MODEL}}\nflow: {type: sequential, steps: [{agent: x}]}\n`);
    // the engine retries a 500 once: both attempts fail
    fake.enqueue([
      { kind: "http-error", status: 500, message: "upstream exploded" },
      { kind: "http-error", status: 500, message: "upstream exploded" },
    ]);
    const runId = await startRun(c, path, "go");
    const failed = await c.waitFor(ended(runId));
    expect(failed).toMatchObject({ type: "strategy_error", error: { code: "EXECUTION_ERROR" }, requestId: `start-${runId}` });
    expect((failed.error as { message: string }).message).toMatch(/upstream exploded/);
    expect(fake.pending()).toBe(0);
    const listed = (await c.request({ type: "list_runs", cwd })).runs as Array<{ runId: string; status: string }>;
    expect(listed.find((r) => r.runId === runId)?.status).toBe("error");

    const again = await c.request({ type: "prepare_run", runId });
    expect(again).toMatchObject({ type: "run_prepared", runId });
    const at = c.frames.length;
    c.send({ type: "continue_run", runId, input: "SAY[recovered]", requestId: "cont" });
    const done = await c.waitFor((f) => ended(runId)(f) && f.requestId === "cont", 15_000, at);
    expect(done).toMatchObject({ type: "strategy_completed", result: "recovered" });
  });
});

