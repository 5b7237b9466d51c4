import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { CommaClient, type Frame } from "../testing/comma-client";
import type { FakeModelServer } from "../testing/fake-model";
import { startRunsWorld, type RunsWorld } from "../testing/runs-world";
import { removeHome, tempHome, type TestServer } from "../testing/server-harness";

let world: RunsWorld;
let fake: FakeModelServer;
let t: TestServer;
let cwd: string;
const strategy = (name: string, body: string) => world.strategy(name, body);

beforeAll(async () => {
  world = await startRunsWorld();
  ({ fake, t, cwd } = world);
  writeFileSync(join(cwd, "notes.txt"), "These are the notes. Line two.\n");
});

afterAll(() => world.stop());

async function startRun(c: CommaClient, path: string, input: string, extra: Record<string, unknown> = {}) {
  const prepared = await c.request({ type: "prepare_run", strategyPath: path, cwd, ...extra });
  expect(prepared.type, JSON.stringify(prepared)).toBe("run_prepared");
  const runId = prepared.runId as string;
  c.send({ type: "start_run", runId, input, requestId: `start-${runId}` });
  return runId;
}

const ended = (runId: string) => (f: Frame) => f.runId === runId && (f.type === "strategy_completed" || f.type === "strategy_error");

describe("strategy runs over /ws", () => {
  it("runs a sequential strategy with a model override, frames in the reference order", async () => {
    const path = strategy("seq", `name: Seq\nversion: "1.0"\nagents:\n  writer:\n    model: anthropic/claude-sonnet-4-5\n    systemPrompt: "SAY[Draft from writer.]"\n  reviewer:\n    model: anthropic/claude-sonnet-4-5\n    systemPrompt: "SAY[Review - looks good.]"\nflow:\n  type: sequential\n  steps: [{agent: writer}, {agent: reviewer}]\n`);
    const c = await CommaClient.connect(t.url);
    const runId = await startRun(c, path, "Write a greeting.", { modelOverride: "anthropic/claude-haiku-4-5" });
    const done = await c.waitFor(ended(runId));
    expect(done).toMatchObject({ type: "strategy_completed", result: "Review - looks good.", usage: { promptTokens: 20, completionTokens: 10 }, requestId: `start-${runId}` });
    const types = c
      .ofRun(runId)
      .filter((f) => f.type !== "run_prepared")
      .map((f) => (f.type === "agent_streaming" ? `stream:${(f.event as { type: string }).type}` : f.type))
      .filter((type, i, all) => !(type === "stream:text" && all[i - 1] === "stream:text")); // text arrives in several deltas
    expect(types).toEqual([
      "strategy_started",
      "step_started", "stream:step-start", "stream:text", "agent_output", "stream:done", "step_completed",
      "step_started", "stream:step-start", "stream:text", "agent_output", "stream:done", "step_completed",
      "strategy_completed",
    ]);
    const reviewerStart = c.ofRun(runId).find((f) => f.type === "step_started" && f.stepName === "reviewer");
    expect(reviewerStart?.message).toBe("Draft from writer.");
    expect(c.ofRun(runId).find((f) => f.type === "agent_output")).toMatchObject({ model: "anthropic/claude-haiku-4-5", contextWindow: 200000 });
    expect(fake.requests.at(-1)?.model).toBe("claude-haiku-4-5");
    c.close();
  });

  it("runs broadcast branches truly in parallel and joins them with the separator", async () => {
    const path = strategy("fan", `name: Fan\nversion: "1.0"\nagents:\n  a: {model: anthropic/m, systemPrompt: "DELAY[40] SAY[alpha alpha alpha]"}\n  b: {model: anthropic/m, systemPrompt: "DELAY[40] SAY[beta beta beta]"}\n  c: {model: anthropic/m, systemPrompt: "DELAY[40] SAY[gamma gamma gamma]"}\nflow:\n  type: broadcast\n  separator: " | "\n  steps: [{agent: a}, {agent: b}, {agent: c}]\n`);
    const c = await CommaClient.connect(t.url);
    const before = fake.requests.length;
    const runId = await startRun(c, path, "go");
    const done = await c.waitFor(ended(runId));
    expect(done.result).toBe("alpha alpha alpha | beta beta beta | gamma gamma gamma");
    const reqs = fake.requests.slice(before);
    expect(reqs).toHaveLength(3);
    const latestStart = Math.max(...reqs.map((r) => r.startedAt));
    const earliestEnd = Math.min(...reqs.map((r) => r.endedAt ?? Infinity));
    expect(latestStart).toBeLessThan(earliestEnd);
    c.close();
  });

  it("cycles with an observer until it says done, counting passes", async () => {
    let judged = 0;
    fake.setHandler((req) => (req.script.system.includes("OBSERVER") ? (++judged >= 2 ? "done" : "keep going") : undefined));
    const path = strategy("cycle", `name: Cycle\nversion: "1.0"\nagents:\n  w: {model: anthropic/m, systemPrompt: "SAY[draft]"}\n  judge: {model: anthropic/m, systemPrompt: "OBSERVER"}\nflow:\n  type: cycle\n  cycles: 5\n  observer: judge\n  steps: [{agent: w}]\n`);
    const c = await CommaClient.connect(t.url);
    const runId = await startRun(c, path, "go");
    const done = await c.waitFor(ended(runId));
    fake.setHandler(undefined);
    expect(done).toMatchObject({ type: "strategy_completed", result: "draft" });
    const frames = c.ofRun(runId);
    expect(frames.filter((f) => f.type === "step_started").map((f) => f.stepName)).toEqual(["w", "w"]);
    expect(frames.filter((f) => f.type === "agent_output").map((f) => f.agentName)).toEqual(["w", "judge", "w", "judge"]);
    c.close();
  });

  it("asks permission before reading outside the cwd, and honours allow, deny and allow-session", async () => {
    const outside = tempHome("switchyard-outside-");
    writeFileSync(join(outside, "secret.txt"), "outside text");
    const path = strategy("perm", `name: Perm\nversion: "1.0"\nagents:\n  x:\n    model: anthropic/m\n    tools: [read_file]\n    systemPrompt: 'USE_TOOL[read_file]{"path":"${join(outside, "secret.txt")}"}'\nflow: {type: sequential, steps: [{agent: x}]}\n`);
    const c = await CommaClient.connect(t.url);
    for (const decision of ["deny", "allow"] as const) {
      const runId = await startRun(c, path, "read it");
      const ask = await c.waitFor((f) => f.runId === runId && f.type === "request_permission");
      expect(ask).toMatchObject({ operation: "fs.read", reason: "policy-ask", agentName: "x", toolName: "read_file" });
      const streamsBefore = c.ofRun(runId).filter((f) => f.type === "agent_streaming" && (f.event as { type: string }).type === "tool-call");
      expect(streamsBefore).toHaveLength(0);
      c.send({ type: "permission_decision", runId, permissionRequestId: ask.requestId, decision });
      const done = await c.waitFor(ended(runId));
      const result = c.ofRun(runId).find((f) => f.type === "agent_streaming" && (f.event as { type: string }).type === "tool-result")?.event as { output: string; status: string };
      expect(result.status).toBe("completed");
      if (decision === "allow") expect(result.output).toContain("outside text");
      else expect(result.output).not.toContain("outside text");
      expect(done.type).toBe("strategy_completed");
    }
    const wrong = await c.request({ type: "permission_decision", runId: "nope", permissionRequestId: "x", decision: "allow" });
    expect(wrong).toMatchObject({ type: "error", code: "NO_PENDING_PERMISSION" });
    c.close();
    removeHome(outside);
  });

  it("waits for a user agent's input, then continues the run with earlier messages restored", async () => {
    const path = strategy("human", `name: Human\nversion: "1.0"\nagents:\n  human: {type: user, config: {presetMessage: "Your topic?"}}\n  echo: {model: anthropic/m}\nflow: {type: sequential, steps: [{agent: human}, {agent: echo}]}\n`);
    const c = await CommaClient.connect(t.url);
    // a user agent asks only when it gets nothing (as the reference's): the run starts without input
    const runId = await startRun(c, path, "");
    const ask = await c.waitFor((f) => f.runId === runId && f.type === "request_input");
    expect(ask).toMatchObject({ agentName: "human", prompt: "Your topic?" });
    const bad = await c.request({ type: "user_input", runId, agentName: "echo", text: "x" });
    expect(bad).toMatchObject({ type: "error", code: "NO_PENDING_INPUT" });
    c.send({ type: "user_input", runId, agentName: "human", text: "SAY[first answer]" });
    expect(await c.waitFor(ended(runId))).toMatchObject({ type: "strategy_completed", result: "first answer" });

    const again = await c.request({ type: "prepare_run", runId });
    expect(again.type).toBe("run_prepared");
    expect((again.conversation as { records: unknown[] }).records).toHaveLength(1);
    const at = c.frames.length;
    c.send({ type: "continue_run", runId, input: "", requestId: "cont-1" });
    const ask2 = await c.waitFor((f) => f.runId === runId && f.type === "request_input", 15_000, at);
    const before = fake.requests.length;
    c.send({ type: "user_input", runId, agentName: "human", text: "second" });
    await c.waitFor((f) => ended(runId)(f) && f.requestId === "cont-1", 15_000, at);
    expect(ask2.type).toBe("request_input");
    const seen = JSON.stringify(fake.requests[before]?.body);
    expect(seen).toContain("SAY[first answer]");
    expect(seen).toContain("first answer");
    const list = await c.request({ type: "list_runs", cwd });
    expect((list.runs as Array<{ runId: string }>).some((r) => r.runId === runId)).toBe(true);
    c.close();
  });

  it("a user agent that gets a message does not ask: it passes the message on, or its preset (as the reference)", async () => {
    const path = strategy("pass", `name: Pass\nversion: "1.0"\nagents:\n  human: {type: user}\n  preset: {type: user, config: {presetMessage: "SAY[from the preset]"}}\n  echo: {model: anthropic/m}\nflow: {type: sequential, steps: [{agent: human}, {agent: echo}, {agent: preset}, {agent: echo}]}\n`);
    const c = await CommaClient.connect(t.url);
    const runId = await startRun(c, path, "SAY[from the input]");
    const end = await c.waitFor(ended(runId));
    expect(end).toMatchObject({ type: "strategy_completed", result: "from the preset" });
    expect(c.ofRun(runId).filter((f) => f.type === "request_input")).toEqual([]);
    const completed = c.ofRun(runId).filter((f) => f.type === "step_completed").map((f) => (f.result as { text: string }).text);
    expect(completed).toEqual(["SAY[from the input]", "from the input", "SAY[from the preset]", "from the preset"]);
    c.close();
  });

  it("stop during a long stream aborts the model call; CANCELLED exactly once", async () => {
    const path = strategy("long", `name: Long\nversion: "1.0"\nagents:\n  talker: {model: anthropic/m, systemPrompt: "LONG[100000] DELAY[5]"}\nflow: {type: sequential, steps: [{agent: talker}]}\n`);
    const c = await CommaClient.connect(t.url);
    const before = fake.requests.length;
    const runId = await startRun(c, path, "talk");
    await c.waitFor((f) => f.runId === runId && f.type === "agent_streaming" && (f.event as { type: string }).type === "text");
    c.send({ type: "stop_run", runId });
    const end = await c.waitFor(ended(runId));
    expect(end).toMatchObject({ type: "strategy_error", error: { code: "CANCELLED" } });
    await new Promise((r) => setTimeout(r, 300));
    expect(c.ofRun(runId).filter((f) => f.type === "strategy_error" || f.type === "strategy_completed")).toHaveLength(1);
    await fake.waitForIdle(5000);
    expect(fake.requests[before]?.aborted).toBe(true);
    c.close();
  });

  it("stops a prepared run and answers protocol errors without closing", async () => {
    const c = await CommaClient.connect(t.url);
    const prepared = await c.request({ type: "prepare_run", strategyPath: strategy("p", `name: P\nversion: "1.0"\nagents: {a: {model: anthropic/m}}\nflow: {type: sequential, steps: [{agent: a}]}\n`), cwd });
    const runId = prepared.runId as string;
    c.send({ type: "stop_run", runId });
    expect(await c.waitFor((f) => f.runId === runId && f.type === "strategy_error")).toMatchObject({ error: { code: "CANCELLED" } });
    expect(await c.request({ type: "start_run", runId })).toMatchObject({ type: "error", code: "START_FAILED" });
    c.send("{nope");
    expect(await c.waitFor((f) => f.code === "PARSE_ERROR")).toMatchObject({ type: "error", message: "Invalid JSON" });
    expect(await c.request({ type: "steer_run", runId, text: "" })).toMatchObject({ type: "error", code: "VALIDATION_ERROR" });
    expect(await c.request({ type: "prepare_run", strategyPath: join(cwd, "missing.yaml"), cwd })).toMatchObject({ type: "error", code: "PREPARE_FAILED" });
    expect(await c.request({ type: "ping" })).toMatchObject({ type: "pong" });
    c.close();
  });
});
