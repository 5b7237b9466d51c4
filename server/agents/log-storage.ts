import type { PgStore } from "../db/pg/pg-store";
import type { SqliteStore } from "../db/sqlite-store";
import type { Store } from "../db/store";
import { AgentLogStore, type AgentLogStorage } from "./log-store";
import { PgAgentLogStore } from "./pg-log-store";

/** The log store of a store's database: prepared statements on SQLite, its twin on PostgreSQL. */
export function agentLogStoreOf(store: Store): AgentLogStorage {
  return store.dialect === "sqlite" ? new AgentLogStore(store as SqliteStore) : new PgAgentLogStore((store as PgStore).db.$client);
}
