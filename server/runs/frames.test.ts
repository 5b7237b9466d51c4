import { describe, expect, it } from "vitest";
import { DaemonMessage } from "../../shared/comma";
import { EventCatalog, type BusEvent, type EventPayload, type EventType } from "../../shared/events";
import { conversationOf, frameOf, isTopStep, policyChain, type Frame } from "./frames";

let nextId = 1;
/** A stored event as the bus delivers it; the payload is checked against the catalogue. */
function event<T extends EventType>(type: T, payload: EventPayload<T>, runId: string | null = "run-1"): BusEvent {
  EventCatalog[type].parse(payload);
  return { id: nextId++, ts: "2026-01-01T00:00:00.000Z", type, scope: runId ? { runId } : {}, payload } as unknown as BusEvent;
}

/** frameOf, and the frame checked against the wire schema as it would be sent. */
function wire(e: BusEvent): Frame | null {
  const frame = frameOf(e);
  if (frame) DaemonMessage.parse({ ...frame, ts: "2026-01-01T00:00:00.000Z" });
  return frame;
}

const usage = { promptTokens: 3, completionTokens: 4 };
const contextUsage = { totalTokens: 7, inputTokens: 3, outputTokens: 4, inputTokenDetails: { noCacheTokens: 3, cacheReadTokens: 0, cacheWriteTokens: 0 } };

describe("frameOf", () => {
  it("run.started -> strategy_started, echoing the start request", () => {
    const flowTree = { type: "sequential", steps: [{ agent: "a" }] };
    const e = event("run.started", { segment: 1, strategyPath: "/s.yaml", strategyName: "S", cwd: "/w", agents: ["a"], flowTree, continuation: false, requestId: "start-1" });
    expect(wire(e)).toEqual({ type: "strategy_started", runId: "run-1", strategyName: "S", agents: ["a"], flowTree, requestId: "start-1" });
  });

  it("step events of the top flow carry the step name, message and result, and no stepKey or requestId", () => {
    expect(wire(event("run.step_started", { stepName: "a", message: "hi", stepKey: "f.0", requestId: "r" }))).toEqual({ type: "step_started", runId: "run-1", stepName: "a", message: "hi" });
    const result = { text: "out", usage, contextUsage, finishReason: "stop" };
    expect(wire(event("run.step_completed", { stepName: "a", result, stepKey: "f.p2.0", requestId: "r" }))).toEqual({ type: "step_completed", runId: "run-1", stepName: "a", result });
    // a user step has no context
    const plain = { text: "typed", usage: { promptTokens: 0, completionTokens: 0 }, finishReason: "stop" };
    expect(wire(event("run.step_completed", { stepName: "human", result: plain, stepKey: "f.1" }))).toEqual({ type: "step_completed", runId: "run-1", stepName: "human", result: plain });
  });

  it("a nested flow of the top flow is a step, named by the flow; steps inside it are not on the wire", () => {
    expect(wire(event("run.flow_started", { stepName: "Fan out", message: "go", stepKey: "f.0" }))).toEqual({ type: "step_started", runId: "run-1", stepName: "Fan out", message: "go" });
    const result = { text: "a\nb", usage, finishReason: "stop" };
    expect(wire(event("run.flow_completed", { stepName: "Fan out", result, stepKey: "f.0" }))).toEqual({ type: "step_completed", runId: "run-1", stepName: "Fan out", result });
    expect(wire(event("run.step_started", { stepName: "alpha", message: "go", stepKey: "f.0.1" }))).toBeNull();
    expect(wire(event("run.step_completed", { stepName: "alpha", result, stepKey: "f.0.p1.0" }))).toBeNull();
    expect(wire(event("run.flow_started", { stepName: "inner", message: "go", stepKey: "f.0.1" }))).toBeNull();
  });

  it("isTopStep: the top flow's own steps, in any cycle pass", () => {
    expect(["f.0", "f.12", "f.p3.0"].every(isTopStep)).toBe(true);
    expect(["f", "f.0.1", "f.p1.obs", "f.0.p2.1", "f.p1.0.0"].some(isTopStep)).toBe(false);
  });

  it("agent events: streaming with its event (done with contextUsage), output with contextUsage only when known", () => {
    const meta = { agentName: "a", model: "anthropic/m", contextWindow: 200000, stepKey: "f.0", requestId: "s" };
    const wireMeta = { agentName: "a", model: "anthropic/m", contextWindow: 200000 };
    expect(wire(event("run.agent_streamed", { ...meta, event: { type: "text", text: "he" } }))).toEqual({ type: "agent_streaming", runId: "run-1", ...wireMeta, event: { type: "text", text: "he" } });
    const done = { type: "done" as const, result: { text: "hello", usage, contextUsage, finishReason: "stop" } };
    expect(wire(event("run.agent_streamed", { ...meta, event: done }))).toEqual({ type: "agent_streaming", runId: "run-1", ...wireMeta, event: done });
    expect(wire(event("run.agent_responded", { ...meta, text: "hello", usage }))).toEqual({ type: "agent_output", runId: "run-1", ...wireMeta, text: "hello", usage });
    expect(wire(event("run.agent_responded", { ...meta, text: "hello", usage, contextUsage }))).toEqual({ type: "agent_output", runId: "run-1", ...wireMeta, text: "hello", usage, contextUsage });
    // a CLI step's events may have no model
    expect(wire(event("run.agent_streamed", { agentName: "cli", event: { type: "step-start" } }))).toEqual({ type: "agent_streaming", runId: "run-1", agentName: "cli", event: { type: "step-start" } });
  });

  it("requests: input without a requestId, question and permission with theirs", () => {
    const createdAt = "2026-01-01T00:00:00.000Z";
    expect(wire(event("run.request_opened", { request: { kind: "input", requestId: "i1", agentName: "human", prompt: "", createdAt, stepKey: "f.0" } }))).toEqual({ type: "request_input", runId: "run-1", agentName: "human", prompt: "" });
    expect(wire(event("run.request_opened", { request: { kind: "question", requestId: "q1", agentName: "a", toolName: "ask_question", question: "Why?", createdAt } }))).toEqual({
      type: "request_question",
      runId: "run-1",
      requestId: "q1",
      agentName: "a",
      toolName: "ask_question",
      question: "Why?",
    });
    const permission = { kind: "permission" as const, requestId: "p1", agentName: "a", operation: "fs.read" as const, resource: "/x", reason: "policy-ask", createdAt, stepKey: "f.0" };
    expect(wire(event("run.request_opened", { request: permission }))).toEqual({ type: "request_permission", runId: "run-1", requestId: "p1", agentName: "a", operation: "fs.read", resource: "/x", reason: "policy-ask" });
    expect(wire(event("run.request_opened", { request: { ...permission, toolName: "read_file", details: { cwd: "/w" } } }))).toMatchObject({ toolName: "read_file", details: { cwd: "/w" } });
  });

  it("policy_updated names the tool's policy chain, without a requestId; steering", () => {
    const policies = { "*": { read: { default: "allow" } }, read_file: { read: { allow: ["**"] } } };
    expect(wire(event("run.policy_updated", { tool: "read_file", policies, requestId: "p" }))).toEqual({
      type: "policy_updated",
      runId: "run-1",
      tool: "read_file",
      policies: [{ name: "read-path-policy" }, { name: "all-tools-read-path-policy" }],
    });
    expect(policyChain("run_command", {})).toEqual([{ name: "deny-commands" }]);
    expect(wire(event("run.steer_queued", { text: "focus" }))).toEqual({ type: "steer_queued", runId: "run-1", text: "focus" });
  });

  it("run.completed -> strategy_completed with the flow's usage, or strategy_error (a stop echoes no request)", () => {
    expect(wire(event("run.completed", { segment: 1, status: "completed", result: "done", usage, requestId: "s" }))).toEqual({ type: "strategy_completed", runId: "run-1", result: "done", usage, requestId: "s" });
    const all = { promptTokens: 30, completionTokens: 15 };
    expect(wire(event("run.completed", { segment: 1, status: "completed", result: "done", usage: all, flowUsage: usage }))).toEqual({ type: "strategy_completed", runId: "run-1", result: "done", usage });
    expect(wire(event("run.completed", { segment: 1, status: "completed" }))).toEqual({ type: "strategy_completed", runId: "run-1", result: "", usage: { promptTokens: 0, completionTokens: 0 } });
    expect(wire(event("run.completed", { segment: 2, status: "cancelled", error: { code: "CANCELLED", message: "Run cancelled by client" }, requestId: "s" }))).toEqual({
      type: "strategy_error",
      runId: "run-1",
      error: { code: "CANCELLED", message: "Run cancelled by client" },
    });
    expect(wire(event("run.completed", { segment: 1, status: "error", requestId: "s" }))).toEqual({ type: "strategy_error", runId: "run-1", error: { code: "EXECUTION_ERROR", message: "Run failed" }, requestId: "s" });
  });

  it("events with no frame, or with no run, give null", () => {
    const record = { id: "c", agentName: "a", createdAt: "", userMessage: "", responseMessages: [], text: "", usage, finishReason: "stop" };
    expect(wire(event("run.agent_called", { record }))).toBeNull();
    expect(wire(event("run.steer_applied", { agentName: "a", text: "x" }))).toBeNull();
    expect(wire(event("run.request_answered", { requestId: "i1", kind: "input", agentName: "a", answer: "x", source: "human" }))).toBeNull();
    expect(wire(event("run.warned", { message: "w" }))).toBeNull();
    expect(wire(event("run.command_ran", { agentName: "a", command: "ls", cwd: "/w", decision: "policy", exitCode: 0, signal: null, timedOut: false, durationMs: 3 }))).toBeNull();
    expect(wire(event("run.steer_queued", { text: "focus" }, null))).toBeNull();
  });
});

describe("conversationOf", () => {
  const started = (input: string, segment: number) =>
    event("run.started", { segment, strategyPath: "/s.yaml", strategyName: "S", cwd: "/w", agents: ["a"], flowTree: {}, initialInput: input, continuation: segment > 1 });
  const called = (id: string, userMessage: string) =>
    event("run.agent_called", {
      record: { id, agentName: "a", createdAt: "2026-01-01T00:00:00.000Z", userMessage, responseMessages: [{ role: "assistant", content: [{ type: "text", text: "ok" }] }], text: "ok", usage, contextUsage, finishReason: "stop", stepKey: "f.0", cliAgentId: "x" },
    });

  it("records in the reference's shape (user message object, contextUsage, no fields of ours); each input before its first record", () => {
    const conversation = conversationOf([started("first", 1), called("r1", "first"), called("r2", "ok"), started("", 2), started("lost", 3), started("again", 4), called("r3", "again"), started("last", 5)]);
    expect(conversation.records.map((r) => r.id)).toEqual(["r1", "r2", "r3"]);
    expect(conversation.records[0]).toEqual({
      id: "r1",
      agentName: "a",
      createdAt: "2026-01-01T00:00:00.000Z",
      userMessage: { role: "user", content: "first" },
      responseMessages: [{ role: "assistant", content: [{ type: "text", text: "ok" }] }],
      text: "ok",
      usage,
      contextUsage,
      finishReason: "stop",
    });
    expect(conversation.inputs).toEqual([{ text: "first", beforeRecordId: "r1" }, { text: "lost" }, { text: "again", beforeRecordId: "r3" }, { text: "last" }]);
    expect(conversation.retentionEvents).toEqual([]);
    DaemonMessage.parse({ type: "run_prepared", ts: "2026-01-01T00:00:00.000Z", runId: "r", strategyName: "S", agents: ["a"], flowTree: {}, conversation, mcpServers: [] });
  });
});
