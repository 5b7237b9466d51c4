/*
 * HOW DOMAIN CODE USES THE STORE (the rules; the runs domain, server/runs/run-lifecycle.ts, is the example):
 * 1. A service takes `store: Store` (not `db: Db`). No `.get()`, `.all()`, `.run()`, `.values()` on drizzle
 *    queries and no `db.$client` in domain code: every query is awaited, so the same code runs on SQLite and
 *    PostgreSQL. Tables come from `store.t` (typed as the SQLite tables; on PostgreSQL the pg-core twins in
 *    server/db/pg/*.sql.ts). `first(query)` for one row.
 * 2. Reads: `await store.read.select()...`. Writes: `await store.tx(async (tx) => ...)`, or with an event:
 *    `bus.publish(type, payload, scope, { write: async (tx) => ... })` (same transaction, its own savepoint;
 *    a throw drops that event only). A write learns what it changed with `.returning(...)`, never `.changes`.
 * 3. A `tx` / `write` body touches only the database through the `tx` it was given: no network, no file I/O,
 *    no waiting on other work, no nested `store.tx` (SQLite holds its one connection until the body ends; the
 *    WriteGate throws on nesting). A read-then-write that must be atomic is a conditional
 *    UPDATE ... WHERE <what was read> ... RETURNING (compare-and-set): PostgreSQL runs transactions
 *    READ COMMITTED, so a select followed by an update inside one tx is NOT atomic across servers there.
 * 4. JSON columns are text on both; booleans boolean; ms timestamps bigint(mode number) on PostgreSQL.
 *    `INSERT OR IGNORE` is `onConflictDoNothing()`; upserts `onConflictDoUpdate`.
 * 5. A hot path on raw prepared better-sqlite3 statements stays so on SQLite, behind an interface with a
 *    PostgreSQL twin on the postgres.js client (`(store as PgStore).db.$client`) and a factory picking by
 *    `store.dialect`. Its SQLite writes respect `SqliteStore.gate` (never land inside another transaction).
 *    Work claimed on PostgreSQL uses `FOR UPDATE SKIP LOCKED`.
 * 6. Tests: unit tests open `openSqliteStore({ path: ":memory:", migrationsDir })`; each domain has a
 *    `<domain>-store.int.test.ts` running its store-facing cases on both (`describe.each(["sqlite", "postgres"])`,
 *    PostgreSQL from `createTestDatabase()` in server/testing/postgres.ts + `openPgStore({ url })`).
 */
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
