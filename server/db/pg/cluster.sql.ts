import { bigint, index, integer, pgTable, primaryKey, text } from "drizzle-orm/pg-core";

/** The servers of one database (twin of server/cluster/cluster.sql.ts). */
export const servers = pgTable("servers", {
  id: text("id").primaryKey(),
  url: text("url").notNull(),
  hostname: text("hostname").notNull(),
  pid: integer("pid").notNull(),
  version: text("version").notNull(),
  startedAt: bigint("started_at", { mode: "number" }).notNull(),
  heartbeatAt: bigint("heartbeat_at", { mode: "number" }).notNull(),
  stoppedAt: bigint("stopped_at", { mode: "number" }),
});

/** Who owns a run or a daemon, with its epoch (twin). */
export const leases = pgTable(
  "leases",
  {
    kind: text("kind").notNull(),
    entityId: text("entity_id").notNull(),
    serverId: text("server_id").notNull(),
    epoch: integer("epoch").notNull(),
    expiresAt: bigint("expires_at", { mode: "number" }).notNull(),
  },
  (t) => [primaryKey({ columns: [t.kind, t.entityId] }), index("leases_server_idx").on(t.serverId), index("leases_expires_idx").on(t.kind, t.expiresAt)],
);

/** Commands for the owner of a run or daemon (twin). */
export const serverCommands = pgTable(
  "server_commands",
  {
    id: text("id").primaryKey(),
    serverId: text("server_id").notNull(),
    fromServerId: text("from_server_id").notNull(),
    op: text("op").notNull(),
    payload: text("payload").notNull(),
    status: text("status", { enum: ["pending", "running", "done", "failed"] }).notNull(),
    result: text("result"),
    createdAt: bigint("created_at", { mode: "number" }).notNull(),
    doneAt: bigint("done_at", { mode: "number" }),
  },
  (t) => [index("server_commands_server_idx").on(t.serverId, t.status)],
);
