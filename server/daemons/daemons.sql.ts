import { index, integer, primaryKey, sqliteTable, text } from "drizzle-orm/sqlite-core";

/** One row per daemon: the listing projection and what recover() resumes after a restart. */
export const daemons = sqliteTable(
  "daemons",
  {
    id: text("id").primaryKey(),
    name: text("name").notNull(),
    persistPath: text("persist_path").notNull(),
    model: text("model").notNull(),
    status: text("status", { enum: ["running", "stopped", "failed"] }).notNull(),
    loopStatus: text("loop_status", { enum: ["done", "stuck", "budget_exhausted", "idle", "watchdog", "failed"] }),
    error: text("error"),
    createdAt: integer("created_at").notNull(),
    updatedAt: integer("updated_at").notNull(),
  },
  (t) => [index("daemons_path_idx").on(t.persistPath), index("daemons_status_idx").on(t.status)],
);

/**
 * The durable trigger queue: a trigger is acknowledged only once its row is committed (group
 * commit, one transaction per event-loop turn). `done` rows are pruned at snapshots.
 */
export const daemonQueue = sqliteTable(
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
