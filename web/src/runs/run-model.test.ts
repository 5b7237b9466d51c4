import { describe, expect, it } from "vitest";
import type { BusEvent, EventPayload, EventType } from "../../../shared/events";
import { applyEvents, emptyRunView } from "./run-model";
import { agentsOf, openRequests, totalUsage } from "./run-selectors";
import { observerStep } from "./step-keys";

let nextId = 1;
function ev<T extends EventType>(type: T, payload: EventPayload<T>): BusEvent {
  const id = nextId++;
  return { id, ts: new Date(1_700_000_000_000 + id * 1000).toISOString(), type, scope: { runId: "r1" }, payload } as BusEvent;
}

const usage = (p: number, c: number) => ({ promptTokens: p, completionTokens: c });
/** cycle (observer judge, 2 passes) around a broadcast of a and b. */
const flowTree = { type: "cycle", cycles: 2, observer: "judge", steps: [{ type: "broadcast", steps: [{ agent: "a" }, { agent: "b" }] }] };
const started = (segment = 1, continuation = false) =>
  ev("run.started", { segment, strategyPath: "s.yaml", strategyName: "S", cwd: "/tmp", agents: ["a", "b", "judge"], flowTree, initialInput: `input ${segment}`, continuation });

function pass(n: number): BusEvent[] {
  return [
    ev("run.step_started", { stepName: "a", message: "go", stepKey: `f.p${n}.0.0` }),
    ev("run.step_started", { stepName: "b", message: "go", stepKey: `f.p${n}.0.1` }),
    ev("run.agent_streamed", { agentName: "a", model: "mock/demo", event: { type: "text", text: "al" } }),
    ev("run.agent_streamed", { agentName: "b", event: { type: "text", text: "be" } }),
    ev("run.agent_streamed", { agentName: "a", event: { type: "text", text: "pha" } }),
    ev("run.agent_responded", { agentName: "a", text: "alpha", usage: usage(10, 5) }),
    ev("run.agent_streamed", { agentName: "a", event: { type: "done", result: { text: "alpha", usage: usage(10, 5), finishReason: "stop" } } }),
    ev("run.step_completed", { stepName: "a", stepKey: `f.p${n}.0.0`, result: { text: "alpha", usage: usage(10, 5), finishReason: "stop" } }),
    ev("run.agent_streamed", { agentName: "b", event: { type: "text", text: "ta" } }),
    ev("run.agent_responded", { agentName: "b", text: "beta", usage: usage(10, 5) }),
    ev("run.agent_streamed", { agentName: "b", event: { type: "done", result: { text: "beta", usage: usage(10, 5), finishReason: "stop" } } }),
    ev("run.step_completed", { stepName: "b", stepKey: `f.p${n}.0.1`, result: { text: "beta", usage: usage(10, 5), finishReason: "stop" } }),
  ];
}

describe("run model", () => {
  it("every command run_command ran shows in its agent's call, with how it was decided and how it ended", () => {
    const view = applyEvents(emptyRunView(), [
      started(),
      ev("run.step_started", { stepName: "a", message: "go", stepKey: "f.p1.0.0" }),
      ev("run.agent_streamed", { agentName: "a", event: { type: "tool-call", toolCallId: "t1", toolName: "run_command", args: '{"command":"ls"}' } }),
      ev("run.command_ran", { agentName: "a", stepKey: "f.p1.0.0", command: "ls", cwd: "/tmp", decision: "policy", exitCode: 0, signal: null, timedOut: false, durationMs: 4 }),
    ]);
    expect(view.calls.at(-1)!.items.at(-1)).toEqual({ kind: "command", command: "ls", cwd: "/tmp", decision: "policy", exitCode: 0, signal: null, timedOut: false, durationMs: 4 });
  });

  it("derives node statuses, passes, streams and usage from the events", () => {
    const events = [started(), ...pass(1)];
    let view = applyEvents(emptyRunView(), events.slice(0, 6));
    expect(view.nodes).toEqual({ "flow.steps.0.steps.0": "running", "flow.steps.0.steps.1": "running" });
    expect(view.passes).toEqual({ flow: 1 });
    expect(view.calls.find((c) => c.agentName === "a")?.items).toEqual([{ kind: "text", text: "alpha" }]);

    view = applyEvents(view, events.slice(6));
    expect(view.nodes).toEqual({ "flow.steps.0.steps.0": "completed", "flow.steps.0.steps.1": "completed" });
    expect(view.calls.map((c) => [c.agentName, c.status, c.open])).toEqual([["a", "completed", false], ["b", "completed", false]]);
    expect(view.calls[0]?.model).toBe("mock/demo");

    // The observer has no step events: it is placed by the latest step key.
    const judge = [
      ev("run.agent_streamed", { agentName: "judge", event: { type: "text", text: "keep going" } }),
      ev("run.agent_responded", { agentName: "judge", text: "keep going", usage: usage(3, 2) }),
    ];
    view = applyEvents(view, judge);
    expect(view.nodes["flow.observer"]).toBe("running");
    expect(view.calls.at(-1)).toMatchObject({ agentName: "judge", stepKey: "f.p1.obs", nodeId: "flow.observer", pass: 1 });
    view = applyEvents(view, [ev("run.agent_streamed", { agentName: "judge", event: { type: "done", result: { text: "keep going", usage: usage(3, 2), finishReason: "stop" } } })]);
    expect(view.nodes["flow.observer"]).toBe("completed");

    view = applyEvents(view, pass(2).slice(0, 2));
    expect(view.passes).toEqual({ flow: 2 });
    expect(view.nodes["flow.steps.0.steps.0"]).toBe("running");
    expect(totalUsage(view)).toEqual(usage(23, 12));
    expect(agentsOf(view).map((a) => [a.agentName, a.calls.length])).toEqual([["a", 2], ["b", 2], ["judge", 1]]);
  });

  it("drops events it already has (a replay after a reconnect)", () => {
    const events = [started(), ...pass(1)];
    const once = applyEvents(emptyRunView(), events);
    expect(applyEvents(once, events)).toBe(once);
    const twice = applyEvents(applyEvents(emptyRunView(), events.slice(0, 6)), events.slice(3));
    expect(twice.calls).toEqual(once.calls);
    expect(twice.lastId).toBe(once.lastId);
  });

  it("tracks requests: the node waits, then runs again once answered", () => {
    const request = { kind: "permission" as const, requestId: "q1", agentName: "a", toolName: "read_file", operation: "fs.read" as const, resource: "/etc/x", reason: "policy-ask", createdAt: "", stepKey: "f.p1.0.0" };
    let view = applyEvents(emptyRunView(), [started(), ev("run.step_started", { stepName: "a", message: "go", stepKey: "f.p1.0.0" }), ev("run.request_opened", { request })]);
    expect(view.nodes["flow.steps.0.steps.0"]).toBe("waiting");
    expect(openRequests(view)).toEqual([request]);
    expect(view.calls[0]?.items).toEqual([{ kind: "request", requestId: "q1" }]);
    view = applyEvents(view, [ev("run.request_answered", { requestId: "q1", kind: "permission", agentName: "a", answer: "allow", decision: "allow", source: "human" })]);
    expect(view.nodes["flow.steps.0.steps.0"]).toBe("running");
    expect(openRequests(view)).toEqual([]);
    expect(view.requests.q1?.answer).toMatchObject({ decision: "allow", source: "human" });
  });

  it("records segments; a stop marks what was running as failed", () => {
    let view = applyEvents(emptyRunView(), [started(), ...pass(1), ev("run.completed", { segment: 1, status: "completed", result: "alpha\n\nbeta", usage: usage(20, 10) })]);
    expect(view.segments).toEqual([expect.objectContaining({ segment: 1, input: "input 1", status: "completed", result: "alpha\n\nbeta", continuation: false })]);
    view = applyEvents(view, [started(2, true), ev("run.step_started", { stepName: "a", message: "more", stepKey: "f.p1.0.0" }), ev("run.completed", { segment: 2, status: "cancelled", error: { code: "CANCELLED", message: "Run cancelled" } })]);
    expect(view.segments.map((s) => [s.segment, s.status, s.continuation])).toEqual([[1, "completed", false], [2, "cancelled", true]]);
    expect(view.nodes).toEqual({ "flow.steps.0.steps.0": "error" });
    expect(view.calls.at(-1)).toMatchObject({ status: "cancelled", open: false, segment: 2 });
  });

  it("streams tool calls, results and thinking into the call", () => {
    const view = applyEvents(emptyRunView(), [
      started(),
      ev("run.step_started", { stepName: "a", message: "go", stepKey: "f.p1.0.0" }),
      ev("run.agent_streamed", { agentName: "a", event: { type: "thinking-start", id: "t" } }),
      ev("run.agent_streamed", { agentName: "a", event: { type: "thinking", id: "t", text: "hmm" } }),
      ev("run.agent_streamed", { agentName: "a", event: { type: "thinking-end", id: "t" } }),
      ev("run.agent_streamed", { agentName: "a", event: { type: "tool-call", toolCallId: "c1", toolName: "read_file", args: '{"path":"x"}' } }),
      ev("run.agent_streamed", { agentName: "a", event: { type: "tool-result", toolCallId: "c1", toolName: "read_file", output: "data", status: "completed" } }),
      ev("run.steer_queued", { text: "be brief" }),
      ev("run.steer_applied", { agentName: "a", text: "be brief" }),
    ]);
    expect(view.calls[0]?.items).toEqual([
      { kind: "thinking", id: "t", text: "hmm", done: true },
      { kind: "tool", toolCallId: "c1", toolName: "read_file", args: '{"path":"x"}', result: { output: "data", status: "completed" } },
      { kind: "steer", text: "be brief" },
    ]);
    expect(view.steers).toEqual([expect.objectContaining({ text: "be brief", appliedTo: "a" })]);
  });
});

describe("observerStep", () => {
  it("picks the innermost cycle whose observer is the agent", () => {
    const observers = { flow: "outer", "flow.steps.0": "inner" };
    expect(observerStep("f.p1.0.p3.0", "inner", observers)).toEqual({ stepKey: "f.p1.0.p3.obs", nodeId: "flow.steps.0.observer", pass: 3 });
    expect(observerStep("f.p1.0.p3.0", "outer", observers)).toEqual({ stepKey: "f.p1.obs", nodeId: "flow.observer", pass: 1 });
    expect(observerStep("f.0", "x", observers)).toBeUndefined();
  });
});
