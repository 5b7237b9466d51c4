import { index, integer, primaryKey, sqliteTable, text } from "drizzle-orm/sqlite-core";

/**
 * The servers of one database (several `yard start` on one PostgreSQL; on SQLite, the one): who
 * they are, where they listen, and their last heartbeat (every 2 s while they run).
 */
export const servers = sqliteTable("servers", {
  id: text("id").primaryKey(),
  url: text("url").notNull(),
  hostname: text("hostname").notNull(),
  pid: integer("pid").notNull(),
  version: text("version").notNull(),
  startedAt: integer("started_at").notNull(),
  heartbeatAt: integer("heartbeat_at").notNull(),
  /** Set on a graceful stop; a server that died keeps its last heartbeat. */
  stoppedAt: integer("stopped_at"),
});

/**
 * Who owns a strategy run or a daemon (kind "run" | "daemon"): one server at a time, renewed every
 * 2 s, lost 10 s after the last renewal. Each take bumps the epoch; the owner's writes check it
 * (server/cluster/leases.ts), so a server that lost its lease cannot write after the new owner.
 */
export const leases = sqliteTable(
  "leases",
  {
    kind: text("kind").notNull(),
    entityId: text("entity_id").notNull(),
    serverId: text("server_id").notNull(),
    epoch: integer("epoch").notNull(),
    expiresAt: integer("expires_at").notNull(),
  },
  (t) => [primaryKey({ columns: [t.kind, t.entityId] }), index("leases_server_idx").on(t.serverId), index("leases_expires_idx").on(t.kind, t.expiresAt)],
);

/**
 * Commands for the owner of a run or daemon, sent by a server that does not own it (stop, steer,
 * answer, trigger...): a queue (the owner claims its rows with FOR UPDATE SKIP LOCKED on
 * PostgreSQL), announced by NOTIFY; the owner writes the result and the sender answers its caller.
 */
export const serverCommands = sqliteTable(
  "server_commands",
  {
    id: text("id").primaryKey(),
    /** The server meant to run it (the owner when it was sent). */
    serverId: text("server_id").notNull(),
    fromServerId: text("from_server_id").notNull(),
    op: text("op").notNull(),
    payload: text("payload").notNull(),
    status: text("status", { enum: ["pending", "running", "done", "failed"] }).notNull(),
    /** JSON: the result when done, `{code, message, kind}` when failed. */
    result: text("result"),
    createdAt: integer("created_at").notNull(),
    doneAt: integer("done_at"),
  },
  (t) => [index("server_commands_server_idx").on(t.serverId, t.status)],
);
