import type { EventStorage } from "../events/event-store";
import type { Db } from "./client";
import type * as schema from "./schema";

/** Which database a store runs on: the embedded SQLite file, or PostgreSQL shared by several servers. */
export type Dialect = "sqlite" | "postgres";

/**
 * The tables the domains query, typed as the SQLite ones. On PostgreSQL the store hands out the
 * pg-core twins instead (server/db/pg/schema.ts): same keys, column names, nullability and value
 * types (schema-parity.test.ts), so a query built from them means the same on both.
 */
export type Tables = typeof schema;

/**
 * What a domain writes with: drizzle's query builder, the part both dialects share. Every query
 * is awaited (never `.get()`, `.all()`, `.run()`: they exist on SQLite only; the linter refuses
 * them outside the SQLite-only stores); `.returning()` tells what a write changed.
 */
export type TxDb = Pick<Db, "select" | "insert" | "update" | "delete">;
/** What a domain reads with, outside a transaction: writes only go through `tx` (or an event's write). */
export type ReadDb = Pick<Db, "select">;

/** A write that belongs to an event: runs in the event's transaction (see EventStorage.append). */
export type RowWrite = (tx: TxDb) => void | Promise<void>;

/**
 * One database for every domain: SQLite (`openSqliteStore`, the embedded default) or PostgreSQL
 * (`openPgStore`, several servers on one database). Domains read through `read`, write through
 * `tx` or with an event (the bus's `write`), and build queries from `t`.
 */
export interface Store {
  readonly dialect: Dialect;
  readonly t: Tables;
  readonly read: ReadDb;
  /** Where the bus keeps events, on the same database. */
  readonly events: EventStorage;
  /**
   * Run `fn` in one transaction: committed when it resolves, rolled back when it throws. `fn`
   * touches only the database through `tx` (no network, no waiting on other work: on SQLite the
   * connection is held until it ends). Not nested: a write inside one uses the `tx` it was given.
   */
  tx<T>(fn: (tx: TxDb) => Promise<T>): Promise<T>;
  close(): Promise<void>;
}

/** The first row of a query's result (drizzle's `.get()`, on both dialects). */
export async function first<T>(rows: PromiseLike<T[]>): Promise<T | undefined> {
  return (await rows)[0];
}
