import { z } from "zod";
import { AgentGrant, AgentMerge, AgentMode, AgentQuestion, AgentUsage, PermissionMode, type AgentInfo } from "../../../shared/agents";
import { AgentStatus } from "../../../shared/statuses";
import { clip } from "../tool-kit";

/**
 * What the agent tools show of an agent: the fields a caller acts on, without the full prompt
 * (its mode's template around the task) and with the task and the result cut short.
 */

export const AgentBrief = z.object({
  id: z.string(),
  alias: z.string(),
  provider: z.string(),
  status: AgentStatus,
  statusReason: z.string().nullable(),
  needsYou: z.boolean().describe("It waits on a human: answers (waiting_for_input, see pendingQuestions) or a tool approval (pendingApprovals)"),
  mode: AgentMode,
  permissionMode: PermissionMode,
  task: z.string().describe("The task as given (cut to 500 characters)"),
  model: z.string().nullable(),
  repoPath: z.string().nullable(),
  baseRef: z.string().nullable(),
  branch: z.string().nullable(),
  workspacePath: z.string(),
  workspaceRemoved: z.boolean(),
  result: z.string().nullable().describe("Its last result (cut to 4,000 characters; agent_output has everything)"),
  pendingQuestions: z.array(AgentQuestion).describe("Questions to answer with answer_agent, by id"),
  pendingApprovals: z.number(),
  queuedMessages: z.number().describe("Follow-ups waiting for the current run to end"),
  usage: AgentUsage,
  lineCount: z.number().describe("Output lines so far (agent_output pages them)"),
  sessionNumber: z.number(),
  taskId: z.string().nullable(),
  phaseId: z.string().nullable(),
  parentAgentId: z.string().nullable().describe("The agent that spawned it with its own token (null: a human, a script or a strategy did)"),
  grants: z.array(AgentGrant).describe('What its token may do beyond itself and the agents it spawns ("daemons": the daemon tools)'),
  cleanupWarning: z.string().nullable(),
  merge: AgentMerge.nullable(),
  createdAt: z.string(),
  updatedAt: z.string(),
  finishedAt: z.string().nullable(),
});
export type AgentBrief = z.infer<typeof AgentBrief>;

export function agentBrief(a: AgentInfo): AgentBrief {
  return {
    id: a.id,
    alias: a.alias,
    provider: a.provider,
    status: a.status,
    statusReason: a.statusReason,
    needsYou: a.needsYou,
    mode: a.mode,
    permissionMode: a.permissionMode,
    task: clip(a.task, 500),
    model: a.model,
    repoPath: a.repoPath,
    baseRef: a.baseRef,
    branch: a.branch,
    workspacePath: a.workspacePath,
    workspaceRemoved: a.workspaceRemoved,
    result: a.result === null ? null : clip(a.result, 4000),
    pendingQuestions: a.pendingQuestions,
    pendingApprovals: a.pendingApprovals,
    queuedMessages: a.queuedMessages.length,
    usage: a.usage,
    lineCount: a.lineCount,
    sessionNumber: a.sessionNumber,
    taskId: a.taskId,
    phaseId: a.phaseId,
    parentAgentId: a.parentAgentId,
    grants: a.grants,
    cleanupWarning: a.cleanupWarning,
    merge: a.merge,
    createdAt: a.createdAt,
    updatedAt: a.updatedAt,
    finishedAt: a.finishedAt,
  };
}

/** One line about an agent, for a tool's text. */
export function agentLine(a: AgentInfo | AgentBrief): string {
  const needs = a.needsYou ? ", needs you" : "";
  const result = a.result ? `: ${clip(a.result, 200)}` : "";
  return `Agent ${a.alias} (${a.id}, ${a.provider}) is ${a.status}${needs}${result}`;
}
