import { sql } from "drizzle-orm";
import { bigint, index, pgTable, text } from "drizzle-orm/pg-core";

/**
 * The event store on PostgreSQL (twin of server/events/events.sql.ts). `id` is an identity
 * column: BY DEFAULT, so a copied SQLite store keeps its ids (the copy then moves the sequence
 * past them). `payload` stays text, not jsonb: the store hands the stored JSON back as written
 * (jsonb would reorder keys and refuse a "\u0000" escape that agent output can carry).
 */
export const events = pgTable(
  "events",
  {
    id: bigint("id", { mode: "number" }).primaryKey().generatedByDefaultAsIdentity(),
    /** Epoch ms. */
    ts: bigint("ts", { mode: "number" }).notNull(),
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
