import { z } from "zod";
import { RunStatus } from "./statuses";

/** Wire shapes of strategy runs, shared by the Comma protocol, tRPC and the dashboard. */

export const Usage = z.object({ promptTokens: z.number().int().nonnegative(), completionTokens: z.number().int().nonnegative() });
export type Usage = z.infer<typeof Usage>;

/** Tokens in the context window at an agent call's last model step (the Comma `contextUsage`). */
export const ContextUsage = z.object({
  totalTokens: z.number().int().nonnegative(),
  inputTokens: z.number().int().nonnegative(),
  outputTokens: z.number().int().nonnegative(),
  inputTokenDetails: z.object({
    noCacheTokens: z.number().int().nonnegative(),
    cacheReadTokens: z.number().int().nonnegative(),
    cacheWriteTokens: z.number().int().nonnegative(),
  }),
});
export type ContextUsage = z.infer<typeof ContextUsage>;

/** A step's result; `contextUsage` only for an LLM agent's own call (not user steps, not flows). */
export const StepResult = z.object({ text: z.string(), usage: Usage, contextUsage: ContextUsage.optional(), finishReason: z.string() });
export type StepResult = z.infer<typeof StepResult>;

/** One `agent_streaming` event, exactly as the reference sends it. */
export const StreamEvent = z.discriminatedUnion("type", [
  z.object({ type: z.literal("text"), text: z.string() }),
  z.object({ type: z.literal("tool-call"), toolCallId: z.string(), toolName: z.string(), args: z.string() }),
  z.object({
    type: z.literal("tool-result"),
    toolCallId: z.string(),
    toolName: z.string(),
    output: z.string(),
    status: z.enum(["completed", "error"]),
    error: z.string().optional(),
  }),
  z.object({ type: z.literal("thinking-start"), id: z.string() }),
  z.object({ type: z.literal("thinking"), id: z.string(), text: z.string() }),
  z.object({ type: z.literal("thinking-end"), id: z.string() }),
  z.object({ type: z.literal("step-start") }),
  z.object({ type: z.literal("done"), result: StepResult }),
]);
export type StreamEvent = z.infer<typeof StreamEvent>;

/** A recorded agent call: what continuation restores into each agent's conversation. */
export const AgentCallRecord = z.object({
  id: z.string(),
  agentName: z.string(),
  createdAt: z.string(),
  userMessage: z.string(),
  /** AI SDK response messages (assistant + tool), as JSON. */
  responseMessages: z.array(z.unknown()),
  text: z.string(),
  usage: Usage,
  contextUsage: ContextUsage.optional(),
  finishReason: z.string(),
  /** Where in the flow the call happened, so a resumed run can skip it. */
  stepKey: z.string().optional(),
  /** A CLI step: the agent that ran it (continue_run sends the follow-up to its session). */
  cliAgentId: z.string().optional(),
});
export type AgentCallRecord = z.infer<typeof AgentCallRecord>;

export const PermissionOperation = z.enum(["fs.read", "fs.write", "fs.exec"]);
export type PermissionOperation = z.infer<typeof PermissionOperation>;

export const PermissionDecision = z.enum(["allow", "deny", "allow-session", "deny-session"]);
export type PermissionDecision = z.infer<typeof PermissionDecision>;

/** Something a run waits on a human for. */
export const PendingRequest = z.discriminatedUnion("kind", [
  z.object({ kind: z.literal("input"), requestId: z.string(), agentName: z.string(), prompt: z.string(), createdAt: z.string(), stepKey: z.string().optional() }),
  z.object({
    kind: z.literal("question"),
    requestId: z.string(),
    agentName: z.string(),
    toolName: z.string(),
    question: z.string(),
    createdAt: z.string(),
    stepKey: z.string().optional(),
  }),
  z.object({
    kind: z.literal("permission"),
    stepKey: z.string().optional(),
    requestId: z.string(),
    agentName: z.string(),
    toolName: z.string().optional(),
    operation: PermissionOperation,
    resource: z.string(),
    reason: z.string(),
    details: z.unknown().optional(),
    createdAt: z.string(),
  }),
]);
export type PendingRequest = z.infer<typeof PendingRequest>;

export const RunSummary = z.object({
  runId: z.string(),
  cwd: z.string(),
  strategyName: z.string(),
  strategyPath: z.string(),
  startedAt: z.string(),
  completedAt: z.string().nullable(),
  status: RunStatus,
  /** Tokens of the latest segment. */
  usage: Usage.optional(),
  /** USD of the latest segment, where known (priced models, CLI agents' own cost). */
  costUsd: z.number().nonnegative().optional(),
});
export type RunSummary = z.infer<typeof RunSummary>;

export const RunError = z.object({ code: z.string(), message: z.string() });
export type RunError = z.infer<typeof RunError>;

export { nodeOfStepKey } from "./step-keys";
