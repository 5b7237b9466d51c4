import { index, integer, sqliteTable, text } from "drizzle-orm/sqlite-core";

/** Questions between agents (or to a human), as in the reference: pending until answered. */
export const conversations = sqliteTable(
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
    createdAt: integer("created_at").notNull(),
    updatedAt: integer("updated_at").notNull(),
  },
  (t) => [index("conversations_to_status_idx").on(t.toAgentId, t.status), index("conversations_from_idx").on(t.fromAgentId)],
);
