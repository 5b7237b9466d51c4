import { z } from "zod";
import { AgentQuestion, MergeStrategy } from "../agents";
import { AgentStatus } from "../statuses";

/**
 * CLI-agent lifecycle and output events (scope: agentId). `agent.output_produced` points at a persisted
 * chunk of raw output lines (written BEFORE the event); readers page the lines themselves, so an
 * event stays small whatever the line sizes are.
 */
const status = AgentStatus;
const reason = z.string().max(2000).optional();

export const AgentEvents = {
  "agent.spawned": z.object({ alias: z.string(), provider: z.string(), status, pid: z.number().int().optional(), workspacePath: z.string(), branch: z.string().nullable() }),
  "agent.output_produced": z.object({
    session: z.number().int(),
    chunkId: z.number().int(),
    fromLine: z.number().int().nonnegative(),
    lineCount: z.number().int().positive(),
    bytes: z.number().int().nonnegative(),
  }),
  "agent.status_changed": z.object({ status, reason }),
  "agent.questions_asked": z.object({ questions: z.array(AgentQuestion) }),
  "agent.resumed": z.object({ session: z.number().int(), reason: z.enum(["answers", "message", "missing_signal", "restart", "account_switch", "commit_request"]), pid: z.number().int().optional() }),
  "agent.went_idle": z.object({ result: z.string().nullable() }),
  "agent.stopped": z.object({ reason }),
  "agent.crashed": z.object({ reason: z.string().max(2000) }),
  "agent.deleted": z.object({ alias: z.string() }),
  /** A usage limit moved the agent to another account (`to` null: none free, it waits). */
  "agent.account_switched": z.object({ from: z.string().nullable(), to: z.string().nullable(), reason: z.string().max(2000), resumedSession: z.boolean() }),
  "agent.message_queued": z.object({ messageId: z.string(), text: z.string().max(2000), queued: z.number().int() }),
  "agent.approval_requested": z.object({ approvalId: z.string(), toolName: z.string(), input: z.unknown().optional() }),
  "agent.approval_decided": z.object({ approvalId: z.string(), status: z.enum(["allowed", "denied", "expired"]), message: z.string().nullable() }),
  "worktree.created": z.object({ alias: z.string(), path: z.string(), branch: z.string().nullable(), baseCommit: z.string().nullable(), kind: z.enum(["worktree", "directory"]) }),
  /** `head`: the branch commit merged; `strategy` and `head` are absent from events stored before they were recorded. */
  "worktree.merged": z.object({ alias: z.string(), branch: z.string(), into: z.string(), commit: z.string(), strategy: MergeStrategy.optional(), head: z.string().optional() }),
  "worktree.removed": z.object({ alias: z.string(), path: z.string(), branch: z.string().nullable(), reason: z.string().max(2000).optional() }),
  /** Switchyard committed work an agent left uncommitted (SWITCHYARD_AGENT_AUTOCOMMIT=on). */
  "worktree.committed": z.object({ alias: z.string(), branch: z.string(), commit: z.string(), files: z.array(z.string()).max(100), fileCount: z.number().int().nonnegative() }),
  /** Cleanup kept a worktree: work in it is not committed (never deleted). */
  "worktree.kept": z.object({ alias: z.string(), path: z.string(), dirty: z.array(z.string()).max(100), reason: z.string().max(2000) }),
} as const;
