import { resolve } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import type { BusEvent } from "../../shared/events";
import { Strategy, type Flow } from "../../shared/strategy";
import { closeDb, openDb, type Db } from "../db/client";
import { EventBus } from "../events/bus";
import { EventStore } from "../events/event-store";
import { breaks, FlowExecutor, MAX_OPEN_CYCLE_PASSES, type StepOutput } from "./flow-executor";
import { RunState, type PolicyPort } from "./run-state";

const migrationsDir = resolve(import.meta.dirname, "..", "..", "drizzle");
let dbs: Db[] = [];

afterEach(() => {
  for (const db of dbs) closeDb(db);
  dbs = [];
});

const policy: PolicyPort = { update: () => {}, remember: () => {}, toJSON: () => ({}) };

/** A running RunState on a real in-memory event bus. */
function runOf(flow: unknown, agents: string[]) {
  const db = openDb({ path: ":memory:", migrationsDir });
  dbs.push(db);
  const bus = new EventBus(new EventStore(db));
  const strategy = Strategy.parse({ name: "S", version: "1.0", agents: Object.fromEntries(agents.map((a) => [a, { model: "anthropic/m" }])), flow });
  const run = new RunState({ runId: "run-1", strategy, strategyPath: "/s.yaml", cwd: "/tmp" }, bus, policy);
  run.beginSegment("req-1");
  const events: BusEvent[] = [];
  bus.on("*", (e) => events.push(e));
  return { run, bus, strategy, events };
}

type Call = { agent: string; input: string; key: string; stepEvents: boolean };

/** An invoker that records each call and answers `agent(input)`, or what `reply` says. */
function recorder(reply: (agent: string, input: string) => string = (agent, input) => `${agent}(${input})`) {
  const calls: Call[] = [];
  const invoke = async (agent: string, input: string, key: string, options: { stepEvents: boolean }): Promise<StepOutput> => {
    calls.push({ agent, input, key, stepEvents: options.stepEvents });
    await Promise.resolve();
    return { text: reply(agent, input), usage: { promptTokens: 1, completionTokens: 2 }, finishReason: "stop" };
  };
  return { calls, invoke };
}

describe("breaks()", () => {
  const signals = ["end cycle", "stop", "done"];

  it("substring (the default) finds a signal anywhere, case-insensitively", () => {
    expect(breaks("We are DONE here", signals, "substring")).toBe(true);
    expect(breaks("please end cycle now", signals, "substring")).toBe(true);
    expect(breaks("keep going", signals, "substring")).toBe(false);
    expect(breaks("", signals, "substring")).toBe(false);
  });

  it("first-line looks at the first line only: the whole line, or the signal as its first word", () => {
    expect(breaks("Done.\nmore text", signals, "first-line")).toBe(true);
    expect(breaks("  done!  ", signals, "first-line")).toBe(true);
    expect(breaks("DONE: all checks pass", signals, "first-line")).toBe(true);
    expect(breaks("done and dusted", signals, "first-line")).toBe(true);
    expect(breaks("not done yet", signals, "first-line")).toBe(false);
    expect(breaks("keep going\ndone", signals, "first-line")).toBe(false);
    expect(breaks("doneness", signals, "first-line")).toBe(false);
  });

  it("any-line needs a line that is exactly the signal (trailing . or ! ignored)", () => {
    expect(breaks("review follows\n  End Cycle.  \n", signals, "any-line")).toBe(true);
    expect(breaks("line one\nstop!", signals, "any-line")).toBe(true);
    expect(breaks("we should stop soon", signals, "any-line")).toBe(false);
  });

  it("exact needs the whole text to be the signal", () => {
    expect(breaks("  Stop. ", signals, "exact")).toBe(true);
    expect(breaks("stop now", signals, "exact")).toBe(false);
    expect(breaks("stop\nstop", signals, "exact")).toBe(false);
  });

  it("custom signals are trimmed and matched case-insensitively; no signals never break", () => {
    expect(breaks("APPROVED", [" approved "], "exact")).toBe(true);
    expect(breaks("LGTM, ship it", ["lgtm"], "first-line")).toBe(false);
    expect(breaks("LGTM ship it", ["lgtm"], "first-line")).toBe(true);
    expect(breaks("done", [], "substring")).toBe(false);
  });
});

describe("FlowExecutor", () => {
  const nested: Flow = {
    type: "sequential",
    steps: [
      { agent: "w" },
      {
        type: "cycle",
        cycles: 2,
        observer: "judge",
        steps: [{ type: "broadcast", separator: " | ", steps: [{ agent: "a" }, { agent: "b" }] }, { agent: "c" }],
      },
      { agent: "z" },
    ],
  } as Flow;

  it("gives every step a deterministic path key and feeds each output to the next step", async () => {
    const { run, strategy } = runOf(nested, ["w", "a", "b", "c", "judge", "z"]);
    const first = recorder();
    const out = await new FlowExecutor(run, first.invoke).execute(strategy.flow, "in");
    expect(first.calls.map((c) => `${c.agent}@${c.key}`)).toEqual([
      "w@f.0",
      "a@f.1.p1.0.0",
      "b@f.1.p1.0.1",
      "c@f.1.p1.1",
      "judge@f.1.p1.obs",
      "a@f.1.p2.0.0",
      "b@f.1.p2.0.1",
      "c@f.1.p2.1",
      "judge@f.1.p2.obs",
      "z@f.2",
    ]);
    expect(new Set(first.calls.map((c) => c.key)).size).toBe(first.calls.length);
    expect(first.calls.filter((c) => !c.stepEvents).map((c) => c.agent)).toEqual(["judge", "judge"]);
    // pass 1: the broadcast joins its branches; c gets the join; the observer gets c's output
    const pass1 = "c(a(w(in)) | b(w(in)))";
    expect(first.calls[3]!.input).toBe("a(w(in)) | b(w(in))");
    expect(first.calls[4]!.input).toBe(pass1);
    // pass 2 starts from the observer's verdict; no signal after the last pass: the verdict is the
    // cycle's output (as the reference), and the observer's calls are not in the flow's usage
    expect(first.calls[5]!.input).toBe(`judge(${pass1})`);
    const pass2 = `c(a(judge(${pass1})) | b(judge(${pass1})))`;
    expect(first.calls[9]!.input).toBe(`judge(${pass2})`);
    expect(out.text).toBe(`z(judge(${pass2}))`);
    expect(out.usage).toEqual({ promptTokens: 8, completionTokens: 16 });

    // the same flow run again gives the same keys
    const again = runOf(nested, ["w", "a", "b", "c", "judge", "z"]);
    const second = recorder();
    await new FlowExecutor(again.run, second.invoke).execute(again.strategy.flow, "other input");
    expect(second.calls.map((c) => c.key)).toEqual(first.calls.map((c) => c.key));
  });

  it("announces step_started and step_completed with the step key, none for the observer", async () => {
    const { run, strategy, bus, events } = runOf(nested, ["w", "a", "b", "c", "judge", "z"]);
    await new FlowExecutor(run, recorder().invoke).execute(strategy.flow, "in");
    bus.flush();
    const started = events.filter((e): e is BusEvent<"run.step_started"> => e.type === "run.step_started");
    const completed = events.filter((e): e is BusEvent<"run.step_completed"> => e.type === "run.step_completed");
    expect(started.map((e) => e.payload.stepKey)).toEqual(["f.0", "f.1.p1.0.0", "f.1.p1.0.1", "f.1.p1.1", "f.1.p2.0.0", "f.1.p2.0.1", "f.1.p2.1", "f.2"]);
    expect(completed.map((e) => e.payload.stepKey).sort()).toEqual(started.map((e) => e.payload.stepKey).sort());
    expect(started.every((e) => e.payload.requestId === "req-1" && e.scope.runId === "run-1")).toBe(true);
    expect(started.some((e) => e.payload.stepName === "judge")).toBe(false);
    // the nested flows are steps too, announced with their own events (named by their type here)
    const flows = events.filter((e): e is BusEvent<"run.flow_started"> => e.type === "run.flow_started");
    expect(flows.map((e) => `${e.payload.stepName}@${e.payload.stepKey}`)).toEqual(["cycle@f.1", "broadcast@f.1.p1.0", "broadcast@f.1.p2.0"]);
    const flowEnds = events.filter((e): e is BusEvent<"run.flow_completed"> => e.type === "run.flow_completed");
    expect(flowEnds.map((e) => e.payload.stepKey)).toEqual(["f.1.p1.0", "f.1.p2.0", "f.1"]);
    expect(flowEnds.at(-1)!.payload.result.usage).toEqual({ promptTokens: 6, completionTokens: 12 });
  });

  it("skips the steps and observer calls a resumed segment already completed", async () => {
    const { run, strategy } = runOf(nested, ["w", "a", "b", "c", "judge", "z"]);
    const usage = { promptTokens: 0, completionTokens: 0 };
    run.memo.steps.set("f.0", { text: "W", usage, finishReason: "stop" });
    run.memo.steps.set("f.1.p1.0.0", { text: "A1", usage, finishReason: "stop" });
    run.memo.calls.set("f.1.p1.obs", { id: "x", agentName: "judge", createdAt: "", userMessage: "", responseMessages: [], text: "J1", usage, finishReason: "stop", stepKey: "f.1.p1.obs" });
    const r = recorder();
    await new FlowExecutor(run, r.invoke).execute(strategy.flow, "in");
    expect(r.calls.map((c) => c.key)).toEqual(["f.1.p1.0.1", "f.1.p1.1", "f.1.p2.0.0", "f.1.p2.0.1", "f.1.p2.1", "f.1.p2.obs", "f.2"]);
    expect(r.calls[0]!.input).toBe("W");
    expect(r.calls[1]!.input).toBe("A1 | b(W)");
    expect(r.calls[2]!.input).toBe("J1");
  });

  it("a cycle without an observer breaks on its own output; an open cycle is bounded", async () => {
    const stopAt = runOf({ type: "cycle", cycles: 5, steps: [{ agent: "w" }] }, ["w"]);
    let n = 0;
    const r = recorder(() => (++n === 3 ? "I am done" : `draft ${n}`));
    const out = await new FlowExecutor(stopAt.run, r.invoke).execute(stopAt.strategy.flow, "go");
    expect(r.calls.map((c) => c.input)).toEqual(["go", "draft 1", "draft 2"]);
    expect(out.text).toBe("I am done");

    const open = runOf({ type: "cycle", steps: [{ agent: "w" }] }, ["w"]);
    const forever = recorder(() => "again");
    await new FlowExecutor(open.run, forever.invoke).execute(open.strategy.flow, "go");
    expect(forever.calls).toHaveLength(MAX_OPEN_CYCLE_PASSES);
  });

  it("an observer's signal ends the cycle with the last step output, per breakCycleSignalMatch", async () => {
    const flow = { type: "cycle", cycles: 4, observer: "judge", breakCycleSignals: ["APPROVED"], breakCycleSignalMatch: "first-line", steps: [{ agent: "w" }] };
    const { run, strategy } = runOf(flow, ["w", "judge"]);
    let verdicts = 0;
    const r = recorder((agent, input) => (agent === "judge" ? (++verdicts === 2 ? "Approved.\nnice" : "not approved: fix it") : `${agent}(${input})`));
    const out = await new FlowExecutor(run, r.invoke).execute(strategy.flow, "go");
    expect(r.calls.map((c) => c.agent)).toEqual(["w", "judge", "w", "judge"]);
    expect(out.text).toBe("w(not approved: fix it)");
  });

  it("stops between steps once the run is cancelled", async () => {
    const { run, strategy } = runOf({ type: "sequential", steps: [{ agent: "a" }, { agent: "b" }] }, ["a", "b"]);
    const r = recorder((agent) => {
      if (agent === "a") run.cancel("stop");
      return agent;
    });
    await expect(new FlowExecutor(run, r.invoke).execute(strategy.flow, "go")).rejects.toThrow(/stop/);
    expect(r.calls.map((c) => c.agent)).toEqual(["a"]);
  });
});
