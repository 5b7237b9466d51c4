import { sql } from "drizzle-orm";
import { index, integer, sqliteTable, text } from "drizzle-orm/sqlite-core";

/** The event store: every bus event, persisted before delivery. */
export const events = sqliteTable(
  "events",
  {
    id: integer("id").primaryKey(),
    ts: integer("ts").notNull(),
    type: text("type").notNull(),
    runId: text("run_id"),
    agentId: text("agent_id"),
    daemonId: text("daemon_id"),
    conversationId: text("conversation_id"),
    payload: text("payload").notNull(),
  },
  (t) => [
    index("events_run_idx").on(t.runId, t.id).where(sql`${t.runId} IS NOT NULL`),
    index("events_agent_idx").on(t.agentId, t.id).where(sql`${t.agentId} IS NOT NULL`),
    index("events_daemon_idx").on(t.daemonId, t.id).where(sql`${t.daemonId} IS NOT NULL`),
    index("events_conversation_idx").on(t.conversationId, t.id).where(sql`${t.conversationId} IS NOT NULL`),
  ],
);
