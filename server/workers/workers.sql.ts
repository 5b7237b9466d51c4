import { integer, sqliteTable, text } from "drizzle-orm/sqlite-core";

/**
 * Workers: `yard worker` processes on other machines that run agents' CLIs for the servers
 * (docs/SCALING.md "Agents on other machines"). A row is made by `yard worker token create`
 * (the token's hash; the token itself is shown once) and filled in when the worker connects.
 */
export const workers = sqliteTable("workers", {
  name: text("name").primaryKey(),
  /** sha256 (hex) of the worker's token; a new token replaces it (the old one stops working). */
  tokenHash: text("token_hash").notNull(),
  /** Set by `yard worker token revoke`: the token is refused, the worker cut off. */
  revokedAt: integer("revoked_at"),
  /** `yard worker drain`: no new agents; the running ones finish. */
  drained: integer("drained", { mode: "boolean" }).notNull().default(false),
  /** What it reported when it last connected (JSON WorkerCapabilities), null before. */
  capabilities: text("capabilities"),
  /** The server it is connected to (null: none). */
  serverId: text("server_id"),
  /** Bumped at each connection: an agent placed under an older epoch is not this connection's. */
  epoch: integer("epoch").notNull().default(0),
  connectedAt: integer("connected_at"),
  heartbeatAt: integer("heartbeat_at"),
  /** When it was declared lost (no contact for the lost delay); cleared when it connects again. */
  lostAt: integer("lost_at"),
  createdAt: integer("created_at").notNull(),
});
