import { bigint, index, integer, pgTable, primaryKey, text } from "drizzle-orm/pg-core";

/** One row per daemon (twin of server/daemons/daemons.sql.ts). */
export const daemons = pgTable(
  "daemons",
  {
    id: text("id").primaryKey(),
    name: text("name").notNull(),
    persistPath: text("persist_path").notNull(),
    model: text("model").notNull(),
    status: text("status", { enum: ["running", "stopped", "failed"] }).notNull(),
    loopStatus: text("loop_status", { enum: ["done", "stuck", "budget_exhausted", "idle", "watchdog", "failed"] }),
    error: text("error"),
    createdAt: bigint("created_at", { mode: "number" }).notNull(),
    updatedAt: bigint("updated_at", { mode: "number" }).notNull(),
  },
  (t) => [index("daemons_path_idx").on(t.persistPath), index("daemons_status_idx").on(t.status)],
);

/** The durable trigger queue (twin of `daemon_queue`); `enqueued_at` is an ISO string there too. */
export const daemonQueue = pgTable(
  "daemon_queue",
  {
    daemonId: text("daemon_id").notNull(),
    seq: integer("seq").notNull(),
    enqueuedAt: text("enqueued_at").notNull(),
    payload: text("payload").notNull(),
    state: text("state", { enum: ["pending", "inflight", "done"] }).notNull(),
  },
  (t) => [primaryKey({ columns: [t.daemonId, t.seq] }), index("daemon_queue_state_idx").on(t.daemonId, t.state, t.seq)],
);
