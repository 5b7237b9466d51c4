import { describe, expect, it } from "vitest";
import type { BusEvent, EventPayload, EventType } from "../../shared/events";
import { Strategy, type Flow } from "../../shared/strategy";
import type { Frame } from "../runs/frames";
import { branchesOf, BroadcastOrder } from "./broadcast-order";

let nextId = 1;
const event = <T extends EventType>(type: T, payload: EventPayload<T>): BusEvent =>
  ({ id: nextId++, ts: "2026-01-01T00:00:00.000Z", type, scope: { runId: "r" }, payload }) as unknown as BusEvent;

const usage = { promptTokens: 1, completionTokens: 1 };
const text = (agentName: string, stepKey: string, t: string) => event("run.agent_streamed", { agentName, stepKey, event: { type: "text", text: t } });
const output = (agentName: string, stepKey: string) => event("run.agent_responded", { agentName, stepKey, text: agentName, usage });
const stepDone = (stepName: string, stepKey: string) => event("run.step_completed", { stepName, stepKey, result: { text: stepName, usage, finishReason: "stop" } });

const flowOf = (flow: unknown): Flow => Strategy.parse({ name: "S", version: "1", agents: { a: { model: "m/x" }, b: { model: "m/x" }, c: { model: "m/x" }, j: { model: "m/x" } }, flow }).flow;
const fan = flowOf({ type: "sequential", steps: [{ type: "broadcast", steps: [{ agent: "a" }, { agent: "b" }, { agent: "c" }] }, { agent: "j" }] });

function recorder(flow: Flow, cap?: number) {
  const sent: Frame[] = [];
  const order = new BroadcastOrder(() => flow, (_runId, frame) => sent.push(frame), cap);
  const label = () => sent.map((f) => (f.type === "agent_streaming" ? `${f.agentName}:${(f.event as { text?: string }).text ?? f.event.type}` : f.type === "agent_output" ? `${f.agentName}:out` : f.type));
  return { order, sent, label };
}

describe("branchesOf", () => {
  it("the broadcasts a step key is inside, with the branch index; cycle passes are part of the broadcast's key", () => {
    expect(branchesOf(fan, "f.0.1")).toEqual([{ broadcast: "f.0", index: 1 }]);
    expect(branchesOf(fan, "f.1")).toEqual([]);
    const nested = flowOf({ type: "cycle", cycles: 2, observer: "j", steps: [{ type: "broadcast", steps: [{ agent: "a" }, { type: "broadcast", steps: [{ agent: "b" }, { agent: "c" }] }] }] });
    expect(branchesOf(nested, "f.p2.0.1.0")).toEqual([
      { broadcast: "f.p2.0", index: 1 },
      { broadcast: "f.p2.0.1", index: 0 },
    ]);
    expect(branchesOf(nested, "f.p1.obs")).toEqual([]);
  });
});

describe("BroadcastOrder", () => {
  it("streams the first branch live, holds the later ones, and flushes each once the ones before it are done", () => {
    const { order, label } = recorder(fan);
    order.push(text("a", "f.0.0", "a1"));
    order.push(text("b", "f.0.1", "b1"));
    order.push(text("c", "f.0.2", "c1"));
    order.push(output("b", "f.0.1"));
    order.push(stepDone("b", "f.0.1"));
    order.push(text("c", "f.0.2", "c2"));
    expect(label()).toEqual(["a:a1"]);
    order.push(text("a", "f.0.0", "a2"));
    order.push(output("a", "f.0.0"));
    expect(label()).toEqual(["a:a1", "a:a2", "a:out"]);
    order.push(stepDone("a", "f.0.0"));
    // b was done already: its frames, then c's, in the order they came
    expect(label()).toEqual(["a:a1", "a:a2", "a:out", "b:b1", "b:out", "c:c1", "c:c2"]);
    order.push(text("c", "f.0.2", "c3"));
    expect(label().at(-1)).toBe("c:c3");
  });

  it("request frames and frames without a step are sent at once", () => {
    const { order, label } = recorder(fan);
    order.push(text("a", "f.0.0", "a1"));
    order.push(text("b", "f.0.1", "b1"));
    order.push(event("run.request_opened", { request: { kind: "permission", requestId: "p", agentName: "b", operation: "fs.read", resource: "/x", reason: "policy-ask", createdAt: "", stepKey: "f.0.1" } }));
    order.push(event("run.steer_queued", { text: "hi" }));
    expect(label()).toEqual(["a:a1", "request_permission", "steer_queued"]);
  });

  it("the run's end flushes whatever is held before it", () => {
    const { order, label } = recorder(fan);
    order.push(text("a", "f.0.0", "a1"));
    order.push(text("b", "f.0.1", "b1"));
    order.push(event("run.completed", { segment: 1, status: "cancelled", error: { code: "CANCELLED", message: "Run cancelled by client" } }));
    expect(label()).toEqual(["a:a1", "b:b1", "strategy_error"]);
  });

  it("past the cap, everything held goes out and the run streams unordered", () => {
    const { order, label } = recorder(fan, 400);
    order.push(text("a", "f.0.0", "a1"));
    order.push(text("b", "f.0.1", "x".repeat(100)));
    expect(label()).toEqual(["a:a1"]);
    order.push(text("b", "f.0.1", "y".repeat(400)));
    expect(label()).toHaveLength(3);
    order.push(text("c", "f.0.2", "c1"));
    expect(label().at(-1)).toBe("c:c1");
  });

  it("a run nobody follows holds nothing; the order still knows which branches are done", () => {
    const sent: Frame[] = [];
    let watching = false;
    const order = new BroadcastOrder(() => fan, (_runId, frame) => sent.push(frame), undefined, () => watching);
    order.push(text("b", "f.0.1", "b1"));
    order.push(stepDone("b", "f.0.1"));
    expect(sent).toHaveLength(1);
    watching = true;
    order.push(text("c", "f.0.2", "c1"));
    expect(sent).toHaveLength(1);
    order.push(stepDone("a", "f.0.0"));
    expect(sent).toHaveLength(2);
  });

  it("nested broadcasts: an inner branch waits for its earlier siblings and for the outer branches before it", () => {
    const nested = flowOf({ type: "broadcast", steps: [{ agent: "a" }, { type: "broadcast", steps: [{ agent: "b" }, { agent: "c" }] }] });
    const { order, label } = recorder(nested);
    order.push(text("c", "f.1.1", "c1"));
    order.push(text("b", "f.1.0", "b1"));
    order.push(text("a", "f.0", "a1"));
    expect(label()).toEqual(["a:a1"]);
    order.push(stepDone("a", "f.0"));
    expect(label()).toEqual(["a:a1", "step_completed", "b:b1"]);
    order.push(stepDone("b", "f.1.0"));
    expect(label()).toEqual(["a:a1", "step_completed", "b:b1", "c:c1"]);
  });
});
