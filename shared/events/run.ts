import { z } from "zod";
import { AgentCallRecord, ContextUsage, PendingRequest, PermissionDecision, RunError, StepResult, StreamEvent, Usage } from "../runs";

/**
 * Strategy-run events (scope: runId). Together they are the run's durable timeline; the Comma
 * protocol frames and the tRPC views are derived from them. `requestId` echoes the start_run or
 * continue_run request that caused the event, as the reference does.
 */
const requestId = z.string().optional();
const agentMeta = { agentName: z.string(), model: z.string().optional(), contextWindow: z.number().int().optional(), stepKey: z.string().optional() };

export const RunEvents = {
  /** A segment starts (the first start, or a continuation). */
  "run.started": z.object({
    segment: z.number().int().positive(),
    strategyPath: z.string(),
    strategyName: z.string(),
    cwd: z.string(),
    agents: z.array(z.string()),
    flowTree: z.record(z.string(), z.unknown()),
    initialInput: z.string().optional(),
    manifestPath: z.string().optional(),
    modelOverride: z.string().optional(),
    continuation: z.boolean(),
    requestId,
  }),
  "run.step_started": z.object({ stepName: z.string(), message: z.string(), stepKey: z.string(), requestId }),
  "run.step_completed": z.object({ stepName: z.string(), result: StepResult, stepKey: z.string(), requestId }),
  "run.agent_streamed": z.object({ ...agentMeta, event: StreamEvent, requestId }),
  /**
   * A step that is a flow (a nested sequential, broadcast or cycle) starts and ends; `stepName` is
   * the flow's name. The Comma wire shows these for the top flow's own steps only, as the reference.
   */
  "run.flow_started": z.object({ stepName: z.string(), message: z.string(), stepKey: z.string(), requestId }),
  "run.flow_completed": z.object({ stepName: z.string(), result: StepResult, stepKey: z.string(), requestId }),
  "run.agent_responded": z.object({ ...agentMeta, text: z.string(), usage: Usage, contextUsage: ContextUsage.optional(), requestId }),
  "run.agent_called": z.object({ record: AgentCallRecord }),
  "run.request_opened": z.object({ request: PendingRequest }),
  "run.request_answered": z.object({
    requestId: z.string(),
    kind: z.enum(["input", "question", "permission"]),
    agentName: z.string(),
    /** user_input text, question response, or the permission decision. */
    answer: z.string(),
    decision: PermissionDecision.optional(),
    source: z.enum(["human", "agent", "policy"]),
  }),
  /** `requestId`: the update_policy request that made the change (none for allow/deny-session). */
  "run.policy_updated": z.object({ tool: z.string(), policies: z.record(z.string(), z.unknown()), requestId }),
  "run.steer_queued": z.object({ text: z.string() }),
  "run.steer_applied": z.object({ agentName: z.string(), text: z.string() }),
  "run.tool_mutated": z.object({ agentName: z.string(), toolName: z.string(), operation: z.string(), path: z.string(), details: z.unknown().optional() }),
  "run.warned": z.object({ message: z.string(), path: z.string().optional() }),
  /** A CLI step spawned (or resumed) a coding agent: the graph links the node to its page. */
  "run.cli_agent_started": z.object({
    agentName: z.string(),
    stepKey: z.string(),
    agentId: z.string(),
    alias: z.string(),
    provider: z.string(),
    branch: z.string().nullable(),
    status: z.string(),
    requestId,
  }),
  /** What the run has spent so far in this segment, against its budget. */
  "run.spend_updated": z.object({
    tokens: z.number().int().nonnegative(),
    usd: z.number().nonnegative(),
    budget: z.object({ tokens: z.number().int().positive().optional(), usd: z.number().positive().optional() }).optional(),
  }),
  /** A segment ends. */
  "run.completed": z.object({
    segment: z.number().int().positive(),
    status: z.enum(["completed", "error", "cancelled"]),
    result: z.string().optional(),
    /** Every call of the segment (observers included): what budgets and costs count. */
    usage: Usage.optional(),
    /**
     * The flow's own result usage, as the Comma protocol reports it: the sum of its steps' results
     * (a cycle's observer calls are not in it). Absent: same as usage.
     */
    flowUsage: Usage.optional(),
    error: RunError.optional(),
    requestId,
  }),
  /**
   * run_command ran a command (the policy let it run without asking, or a human allowed it):
   * every command is on the timeline, with how it was decided and how it ended.
   */
  "run.command_ran": z.object({
    agentName: z.string(),
    stepKey: z.string().optional(),
    command: z.string(),
    cwd: z.string(),
    decision: z.enum(["policy", "human"]),
    exitCode: z.number().int().nullable(),
    signal: z.string().nullable(),
    timedOut: z.boolean(),
    durationMs: z.number().int().nonnegative(),
  }),
} as const;
