import { bigint, index, pgTable, text } from "drizzle-orm/pg-core";

/** Questions between agents or to a human (twin of server/conversations/conversations.sql.ts). */
export const conversations = pgTable(
  "conversations",
  {
    id: text("id").primaryKey(),
    fromAgentId: text("from_agent_id").notNull(),
    toAgentId: text("to_agent_id").notNull(),
    initiativeId: text("initiative_id"),
    phaseId: text("phase_id"),
    taskId: text("task_id"),
    question: text("question").notNull(),
    answer: text("answer"),
    status: text("status", { enum: ["pending", "answered"] }).notNull(),
    createdAt: bigint("created_at", { mode: "number" }).notNull(),
    updatedAt: bigint("updated_at", { mode: "number" }).notNull(),
  },
  (t) => [index("conversations_to_status_idx").on(t.toAgentId, t.status), index("conversations_from_idx").on(t.fromAgentId)],
);
