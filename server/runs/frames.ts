import type { BusEvent } from "../../shared/events";

export type Frame = { type: string; [key: string]: unknown };

const withRequestId = (frame: Frame, requestId: string | undefined): Frame => (requestId ? { ...frame, requestId } : frame);

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
      return withRequestId({ type: "step_started", runId, stepName: event.payload.stepName, message: event.payload.message }, event.payload.requestId);
    case "run.step_completed":
      return withRequestId({ type: "step_completed", runId, stepName: event.payload.stepName, result: event.payload.result }, event.payload.requestId);
    case "run.agent_streamed": {
      const p = event.payload;
      return withRequestId({ type: "agent_streaming", runId, agentName: p.agentName, model: p.model, contextWindow: p.contextWindow, event: p.event }, p.requestId);
    }
    case "run.agent_output": {
      const p = event.payload;
      const frame: Frame = { type: "agent_output", runId, agentName: p.agentName, model: p.model, contextWindow: p.contextWindow, text: p.text, usage: p.usage };
      if (p.contextUsage) frame.contextUsage = p.contextUsage;
      return withRequestId(frame, p.requestId);
    }
    case "run.request_opened": {
      const r = event.payload.request;
      if (r.kind === "input") return { type: "request_input", runId, agentName: r.agentName, prompt: r.prompt };
      if (r.kind === "question") return { type: "request_question", runId, requestId: r.requestId, agentName: r.agentName, toolName: r.toolName, question: r.question };
      const frame: Frame = { type: "request_permission", runId, requestId: r.requestId, agentName: r.agentName, operation: r.operation, resource: r.resource, reason: r.reason };
      if (r.toolName) frame.toolName = r.toolName;
      if (r.details !== undefined) frame.details = r.details;
      return frame;
    }
    case "run.policy_updated":
      return withRequestId({ type: "policy_updated", runId, tool: event.payload.tool, policies: event.payload.policies }, event.payload.requestId);
    case "run.steer_queued":
      return { type: "steer_queued", runId, text: event.payload.text };
    case "run.completed": {
      const p = event.payload;
      if (p.status === "completed") return withRequestId({ type: "strategy_completed", runId, result: p.result ?? "", usage: p.usage ?? { promptTokens: 0, completionTokens: 0 } }, p.requestId);
      return withRequestId({ type: "strategy_error", runId, error: p.error ?? { code: "EXECUTION_ERROR", message: "Run failed" } }, p.requestId);
    }
    default:
      return null;
  }
}
