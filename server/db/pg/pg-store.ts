import { PgEventStore } from "../../events/pg-event-store";
import type { ReadDb, Store, Tables, TxDb } from "../store";
import { closePg, openPg, type OpenPgOptions, type PgDb } from "./client";
import { untilConnectionLoss } from "./connection-loss";
import * as pgSchema from "./schema";

/**
 * The store on PostgreSQL, shared by every server on the database. The domains build their
 * queries from the pg-core twins of the SQLite tables (typed as those: schema-parity.test.ts
 * holds both to the same keys, columns and value types).
 */
export class PgStore implements Store {
  readonly dialect = "postgres" as const;
  readonly t = pgSchema as unknown as Tables;
  readonly read: ReadDb;
  readonly events: PgEventStore;

  constructor(readonly db: PgDb) {
    this.read = db as unknown as ReadDb;
    this.events = new PgEventStore(db.$client);
  }

  tx<T>(fn: (tx: TxDb) => Promise<T>): Promise<T> {
    return this.db.transaction((tx) => untilConnectionLoss(fn(tx as unknown as TxDb)));
  }

  async close(): Promise<void> {
    await closePg(this.db);
  }
}

export async function openPgStore(options: OpenPgOptions): Promise<PgStore> {
  return new PgStore(await openPg(options));
}
