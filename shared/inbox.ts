import { z } from "zod";
import { AgentQuestion } from "./agents";
import { PendingRequest } from "./runs";

/** Everything waiting on a human, in one list: agents' questions and tool approvals, interrupted agents, runs' requests. */
export const InboxItem = z.discriminatedUnion("kind", [
  z.object({ kind: z.literal("agent_question"), id: z.string(), agentId: z.string(), alias: z.string(), questions: z.array(AgentQuestion), createdAt: z.string() }),
  z.object({
    kind: z.literal("agent_approval"),
    id: z.string(),
    agentId: z.string(),
    alias: z.string(),
    toolName: z.string(),
    input: z.unknown().optional(),
    createdAt: z.string(),
  }),
  /** An agent whose host was lost (a worker gone): resume it (elsewhere) or stop it. */
  z.object({ kind: z.literal("agent_interrupted"), id: z.string(), agentId: z.string(), alias: z.string(), reason: z.string(), worker: z.string().nullable(), createdAt: z.string() }),
  z.object({ kind: z.literal("conversation"), id: z.string(), fromAgentId: z.string(), alias: z.string(), question: z.string(), createdAt: z.string() }),
  z.object({ kind: z.literal("run_request"), id: z.string(), runId: z.string(), strategyName: z.string(), request: PendingRequest, createdAt: z.string() }),
]);
export type InboxItem = z.infer<typeof InboxItem>;
