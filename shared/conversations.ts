import { z } from "zod";
import { ConversationStatus } from "./statuses";

/** Questions between agents (or from an agent to a human), answered asynchronously. */
export const HUMAN = "human";

export const Conversation = z.object({
  id: z.string(),
  fromAgentId: z.string(),
  /** An agent id, or "human". */
  toAgentId: z.string(),
  initiativeId: z.string().nullable(),
  phaseId: z.string().nullable(),
  taskId: z.string().nullable(),
  question: z.string(),
  answer: z.string().nullable(),
  status: ConversationStatus,
  createdAt: z.string(),
  updatedAt: z.string(),
});
export type Conversation = z.infer<typeof Conversation>;

export const AskInput = z
  .object({
    fromAgentId: z.string().min(1),
    question: z.string().min(1),
    /** Exactly one target: an agent, the running agent with a task or phase label, or a human. */
    toAgentId: z.string().min(1).optional(),
    taskId: z.string().min(1).optional(),
    phaseId: z.string().min(1).optional(),
  })
  .strict()
  .refine((v) => [v.toAgentId, v.taskId, v.phaseId].filter((x) => x !== undefined).length === 1, {
    message: "give exactly one of toAgentId (an agent id or \"human\"), taskId, phaseId",
    path: ["toAgentId"],
  });
export type AskInput = z.infer<typeof AskInput>;
