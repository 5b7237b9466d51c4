import type { DaemonFrame, DaemonFrameOf, WireConversation, WireConversationInput, WireConversationRecord } from "../../shared/comma";
import type { BusEvent } from "../../shared/events";
import type { AgentCallRecord, StepResult, StreamEvent } from "../../shared/runs";

/** A frame before it is sent (`ts` is stamped at send time); typed by shared/comma.ts. */
export type Frame = DaemonFrame;

const withRequestId = <F extends Frame>(frame: F, requestId: string | undefined): F => (requestId ? { ...frame, requestId } : frame);

/**
 * The top flow's own steps (`f.2`, or `f.p3.0` in a top-level cycle): the only steps the
 * reference announces with step_started / step_completed. Deeper steps (inside a nested flow)
 * are on our timeline but not on the Comma wire.
 */
export function isTopStep(stepKey: string): boolean {
  return /^f(?:\.p\d+)?\.\d+$/.test(stepKey);
}

/** A step result on the wire: `contextUsage` only where there is one. */
function wireResult(r: StepResult): DaemonFrameOf<"step_completed">["result"] {
  return { text: r.text, usage: { promptTokens: r.usage.promptTokens, completionTokens: r.usage.completionTokens }, ...(r.contextUsage ? { contextUsage: r.contextUsage } : {}), finishReason: r.finishReason };
}

function wireStreamEvent(e: StreamEvent): DaemonFrameOf<"agent_streaming">["event"] {
  return e.type === "done" ? { type: "done", result: wireResult(e.result) } : e;
}

const agentFields = (p: { agentName: string; model?: string; contextWindow?: number }) => ({
  agentName: p.agentName,
  ...(p.model !== undefined ? { model: p.model } : {}),
  ...(p.contextWindow !== undefined ? { contextWindow: p.contextWindow } : {}),
});

/**
 * The Comma protocol's view of a run event: one function, so the WebSocket frames, the tRPC
 * stream and the timeline stay three views of the same events. Events with no frame give null.
 */
export function frameOf(event: BusEvent): Frame | null {
  const runId = event.scope.runId;
  if (!runId) return null;
  switch (event.type) {
    case "run.started": {
      const p = event.payload;
      return withRequestId({ type: "strategy_started", runId, strategyName: p.strategyName, agents: p.agents, flowTree: p.flowTree }, p.requestId);
    }
    case "run.step_started":
    case "run.flow_started":
      if (!isTopStep(event.payload.stepKey)) return null;
      return { type: "step_started", runId, stepName: event.payload.stepName, message: event.payload.message };
    case "run.step_completed":
    case "run.flow_completed":
      if (!isTopStep(event.payload.stepKey)) return null;
      return { type: "step_completed", runId, stepName: event.payload.stepName, result: wireResult(event.payload.result) };
    case "run.agent_streamed":
      return { type: "agent_streaming", runId, ...agentFields(event.payload), event: wireStreamEvent(event.payload.event) };
    case "run.agent_responded": {
      const p = event.payload;
      return { type: "agent_output", runId, ...agentFields(p), text: p.text, usage: { promptTokens: p.usage.promptTokens, completionTokens: p.usage.completionTokens }, ...(p.contextUsage ? { contextUsage: p.contextUsage } : {}) };
    }
    case "run.request_opened":
      return requestFrame(runId, event.payload.request);
    case "run.policy_updated":
      // as the reference: broadcast to the run's subscribers, no requestId
      return { type: "policy_updated", runId, tool: event.payload.tool, policies: policyChain(event.payload.tool, event.payload.policies) };
    case "run.steer_queued":
      return { type: "steer_queued", runId, text: event.payload.text };
    case "run.completed": {
      const p = event.payload;
      if (p.status === "completed") {
        const usage = p.flowUsage ?? p.usage ?? { promptTokens: 0, completionTokens: 0 };
        return withRequestId({ type: "strategy_completed", runId, result: p.result ?? "", usage: { promptTokens: usage.promptTokens, completionTokens: usage.completionTokens } }, p.requestId);
      }
      const error = p.error ?? { code: "EXECUTION_ERROR", message: "Run failed" };
      // a stop is not an answer to the start: the reference sends CANCELLED without a requestId
      return withRequestId({ type: "strategy_error", runId, error: { code: error.code, message: error.message } }, p.status === "cancelled" ? undefined : p.requestId);
    }
    default:
      return null;
  }
}

function requestFrame(runId: string, r: BusEvent<"run.request_opened">["payload"]["request"]): Frame {
  if (r.kind === "input") return { type: "request_input", runId, agentName: r.agentName, prompt: r.prompt };
  if (r.kind === "question") return { type: "request_question", runId, requestId: r.requestId, agentName: r.agentName, toolName: r.toolName, question: r.question };
  const details = r.details !== null && typeof r.details === "object" && !Array.isArray(r.details) ? (r.details as Record<string, unknown>) : undefined;
  return {
    type: "request_permission",
    runId,
    requestId: r.requestId,
    agentName: r.agentName,
    ...(r.toolName ? { toolName: r.toolName } : {}),
    operation: r.operation,
    resource: r.resource,
    reason: r.reason === "policy-deny-override" ? "policy-deny-override" : "policy-ask",
    ...(details ? { details } : {}),
  };
}

/**
 * The policy chain of one tool as the Comma wire names it (`{name}` objects, first decisive
 * first): the run_command deny-list, the tool's own read/write rules, the rules for every tool.
 */
export function policyChain(tool: string, policies: Record<string, unknown>): Array<{ name: string }> {
  const names: string[] = [];
  if (tool === "run_command") names.push("deny-commands");
  const rulesOf = (key: string) => (policies[key] && typeof policies[key] === "object" ? (policies[key] as Record<string, unknown>) : {});
  const own = rulesOf(tool);
  for (const mode of ["read", "write"] as const) if (own[mode]) names.push(`${mode}-path-policy`);
  if (tool !== "*") for (const mode of ["read", "write"] as const) if (rulesOf("*")[mode]) names.push(`all-tools-${mode}-path-policy`);
  return names.map((name) => ({ name }));
}

/** A recorded agent call as the Comma wire carries it (no fields of our own: stepKey, cliAgentId). */
export function wireRecord(r: AgentCallRecord): WireConversationRecord {
  return {
    id: r.id,
    agentName: r.agentName,
    createdAt: r.createdAt,
    userMessage: { role: "user", content: r.userMessage },
    responseMessages: r.responseMessages as WireConversationRecord["responseMessages"],
    text: r.text,
    usage: { promptTokens: r.usage.promptTokens, completionTokens: r.usage.completionTokens },
    ...(r.contextUsage ? { contextUsage: r.contextUsage } : {}),
    finishReason: r.finishReason,
  };
}

/**
 * The conversation run_prepared carries, from a run's timeline: every agent call record, and the
 * human input each segment started with, placed before the first record it led to (an input that
 * led to no record stands alone; a later one follows it).
 */
export function conversationOf(events: readonly BusEvent[]): WireConversation {
  const records: WireConversationRecord[] = [];
  const inputs: WireConversationInput[] = [];
  let pending: string | undefined;
  for (const e of events) {
    if (e.type === "run.started") {
      const text = e.payload.initialInput;
      if (text === undefined || text.length === 0) continue;
      if (pending !== undefined) inputs.push({ text: pending });
      pending = text;
    } else if (e.type === "run.agent_called") {
      if (pending !== undefined) inputs.push({ text: pending, beforeRecordId: e.payload.record.id });
      pending = undefined;
      records.push(wireRecord(e.payload.record));
    }
  }
  if (pending !== undefined) inputs.push({ text: pending });
  return { records, retentionEvents: [], inputs };
}
