import { z } from "zod";

/** Conversation events (scope: conversationId, and agentId = the one asked). */
export const ConversationEvents = {
  "conversation.created": z.object({ fromAgentId: z.string(), toAgentId: z.string(), question: z.string().max(4000) }),
  "conversation.answered": z.object({ fromAgentId: z.string(), toAgentId: z.string(), answer: z.string().max(4000) }),
} as const;
