import { bigint, boolean, integer, pgTable, text } from "drizzle-orm/pg-core";

/** Workers on other machines (twin of server/workers/workers.sql.ts). */
export const workers = pgTable("workers", {
  name: text("name").primaryKey(),
  tokenHash: text("token_hash").notNull(),
  revokedAt: bigint("revoked_at", { mode: "number" }),
  drained: boolean("drained").notNull().default(false),
  capabilities: text("capabilities"),
  serverId: text("server_id"),
  epoch: integer("epoch").notNull().default(0),
  connectedAt: bigint("connected_at", { mode: "number" }),
  heartbeatAt: bigint("heartbeat_at", { mode: "number" }),
  lostAt: bigint("lost_at", { mode: "number" }),
  createdAt: bigint("created_at", { mode: "number" }).notNull(),
});
