import { describe, expect, it } from "vitest";
import { EventCatalog, type BusEvent, type EventPayload, type EventType } from "../../shared/events";
import { frameOf } from "./frames";

/** A stored event as the bus delivers it; the payload is checked against the catalogue. */
function event<T extends EventType>(type: T, payload: EventPayload<T>, runId: string | null = "run-1"): BusEvent {
  EventCatalog[type].parse(payload);
  return { id: 7, ts: "2026-01-01T00:00:00.000Z", type, scope: runId ? { runId } : {}, payload } as unknown as BusEvent;
}

const usage = { promptTokens: 3, completionTokens: 4 };

describe("frameOf", () => {
  it("run.started -> strategy_started, echoing the start request", () => {
    const flowTree = { type: "sequential", steps: [{ agent: "a" }] };
    const e = event("run.started", { segment: 1, strategyPath: "/s.yaml", strategyName: "S", cwd: "/w", agents: ["a"], flowTree, continuation: false, requestId: "start-1" });
    expect(frameOf(e)).toEqual({ type: "strategy_started", runId: "run-1", strategyName: "S", agents: ["a"], flowTree, requestId: "start-1" });
  });

  it("step events carry the step name, message and result, and no stepKey", () => {
    expect(frameOf(event("run.step_started", { stepName: "a", message: "hi", stepKey: "f.0" }))).toEqual({ type: "step_started", runId: "run-1", stepName: "a", message: "hi" });
    const result = { text: "out", usage, finishReason: "stop" };
    expect(frameOf(event("run.step_completed", { stepName: "a", result, stepKey: "f.0", requestId: "r" }))).toEqual({ type: "step_completed", runId: "run-1", stepName: "a", result, requestId: "r" });
  });

  it("agent events: streaming with its event, output with contextUsage only when known", () => {
    const meta = { agentName: "a", model: "anthropic/m", contextWindow: 200000 };
    expect(frameOf(event("run.agent_streamed", { ...meta, event: { type: "text", text: "he" } }))).toEqual({ type: "agent_streaming", runId: "run-1", ...meta, event: { type: "text", text: "he" } });
    expect(frameOf(event("run.agent_output", { ...meta, text: "hello", usage }))).toEqual({ type: "agent_output", runId: "run-1", ...meta, text: "hello", usage });
    const contextUsage = { totalTokens: 7 };
    expect(frameOf(event("run.agent_output", { ...meta, text: "hello", usage, contextUsage, requestId: "s" }))).toMatchObject({ contextUsage, requestId: "s" });
  });

  it("requests: input without a requestId, question and permission with theirs", () => {
    const createdAt = "2026-01-01T00:00:00.000Z";
    expect(frameOf(event("run.request_opened", { request: { kind: "input", requestId: "i1", agentName: "human", prompt: "", createdAt } }))).toEqual({ type: "request_input", runId: "run-1", agentName: "human", prompt: "" });
    expect(frameOf(event("run.request_opened", { request: { kind: "question", requestId: "q1", agentName: "a", toolName: "ask_question", question: "Why?", createdAt } }))).toEqual({
      type: "request_question",
      runId: "run-1",
      requestId: "q1",
      agentName: "a",
      toolName: "ask_question",
      question: "Why?",
    });
    const permission = { kind: "permission" as const, requestId: "p1", agentName: "a", operation: "fs.read" as const, resource: "/x", reason: "policy-ask", createdAt };
    expect(frameOf(event("run.request_opened", { request: permission }))).toEqual({ type: "request_permission", runId: "run-1", requestId: "p1", agentName: "a", operation: "fs.read", resource: "/x", reason: "policy-ask" });
    expect(frameOf(event("run.request_opened", { request: { ...permission, toolName: "read_file", details: { cwd: "/w" } } }))).toMatchObject({ toolName: "read_file", details: { cwd: "/w" } });
  });

  it("policy and steering frames", () => {
    const policies = { "*": { read: { default: "allow" } } };
    expect(frameOf(event("run.policy_updated", { tool: "*", policies }))).toEqual({ type: "policy_updated", runId: "run-1", tool: "*", policies });
    expect(frameOf(event("run.steer_queued", { text: "focus" }))).toEqual({ type: "steer_queued", runId: "run-1", text: "focus" });
  });

  it("run.completed -> strategy_completed, or strategy_error with the stored error", () => {
    expect(frameOf(event("run.completed", { segment: 1, status: "completed", result: "done", usage, requestId: "s" }))).toEqual({ type: "strategy_completed", runId: "run-1", result: "done", usage, requestId: "s" });
    expect(frameOf(event("run.completed", { segment: 1, status: "completed" }))).toEqual({ type: "strategy_completed", runId: "run-1", result: "", usage: { promptTokens: 0, completionTokens: 0 } });
    expect(frameOf(event("run.completed", { segment: 2, status: "cancelled", error: { code: "CANCELLED", message: "Run cancelled" } }))).toEqual({
      type: "strategy_error",
      runId: "run-1",
      error: { code: "CANCELLED", message: "Run cancelled" },
    });
    expect(frameOf(event("run.completed", { segment: 1, status: "error" }))).toMatchObject({ type: "strategy_error", error: { code: "EXECUTION_ERROR" } });
  });

  it("events with no frame, or with no run, give null", () => {
    const record = { id: "c", agentName: "a", createdAt: "", userMessage: "", responseMessages: [], text: "", usage, finishReason: "stop" };
    expect(frameOf(event("run.agent_called", { record }))).toBeNull();
    expect(frameOf(event("run.steer_applied", { agentName: "a", text: "x" }))).toBeNull();
    expect(frameOf(event("run.request_answered", { requestId: "i1", kind: "input", agentName: "a", answer: "x", source: "human" }))).toBeNull();
    expect(frameOf(event("run.warning", { message: "w" }))).toBeNull();
    expect(frameOf(event("run.steer_queued", { text: "focus" }, null))).toBeNull();
  });
});
