import { EventStore } from "../events/event-store";
import { closeDb, openDb, type Db, type OpenDbOptions } from "./client";
import * as schema from "./schema";
import type { ReadDb, Store, TxDb } from "./store";
import { WriteGate } from "./write-gate";

/**
 * The embedded store: one SQLite file (WAL), one connection, synchronous underneath. A
 * transaction (`tx`, or an event's row writes) holds the connection through the write gate, so no
 * other write lands inside it; reads run at once (in this process they may see a transaction
 * that is still open: it holds the connection only across microtasks, never across I/O).
 */
export class SqliteStore implements Store {
  readonly dialect = "sqlite" as const;
  readonly t = schema;
  readonly read: ReadDb;
  /** Shared by every writer on this connection: the event store, agent output, daemon queues. */
  readonly gate = new WriteGate();
  readonly events: EventStore;

  constructor(readonly db: Db) {
    this.read = db;
    this.events = new EventStore(db, this.gate);
  }

  tx<T>(fn: (tx: TxDb) => Promise<T>): Promise<T> {
    const sqlite = this.db.$client;
    return this.gate.exclusive(async () => {
      sqlite.exec("BEGIN IMMEDIATE");
      try {
        const result = await fn(this.db);
        sqlite.exec("COMMIT");
        return result;
      } catch (err) {
        if (sqlite.inTransaction) sqlite.exec("ROLLBACK");
        throw err;
      }
    });
  }

  async close(): Promise<void> {
    closeDb(this.db);
  }
}

export function openSqliteStore(options: OpenDbOptions): SqliteStore {
  return new SqliteStore(openDb(options));
}
