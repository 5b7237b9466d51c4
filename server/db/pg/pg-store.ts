import postgres, { type Sql } from "postgres";
import { PgEventStore } from "../../events/pg-event-store";
import type { ReadDb, Store, Tables, TxDb } from "../store";
import { clientOptions, closePg, openPg, type OpenPgOptions, type PgDb } from "./client";
import { DATABASE_URL_VAR } from "./errors";
import * as pgSchema from "./schema";
import { redactDatabaseUrl } from "./url";

/**
 * The session-level advisory lock a server holds on its database for as long as it runs (its own
 * connection: released when the server stops or dies). Until runs and daemons have owners (leases,
 * issue 18 item 4), a second server would take over what the first one runs: it is refused.
 */
export const SERVER_LOCK_KEY = 7_422_020;

/** Another server holds the database. */
export class DatabaseInUse extends Error {
  readonly code = "DB_IN_USE";
}

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

  /** The connection that holds SERVER_LOCK_KEY (a server's store only). */
  private lockHolder: Sql | undefined;

  constructor(readonly db: PgDb) {
    this.read = db as unknown as ReadDb;
    this.events = new PgEventStore(db.$client);
  }

  /** Hold the database for this server alone; DatabaseInUse when another server holds it. */
  async holdAsSoleServer(url: string): Promise<void> {
    const holder = postgres(url, clientOptions(1, 5));
    const [row] = await holder<Array<{ locked: boolean }>>`SELECT pg_try_advisory_lock(${SERVER_LOCK_KEY}) AS locked`;
    if (!row?.locked) {
      await holder.end({ timeout: 5 });
      throw new DatabaseInUse(
        `Another Switchyard server runs on the PostgreSQL database at ${redactDatabaseUrl(url)} (${DATABASE_URL_VAR}). ` +
          "This version runs one server per database (several servers need run and daemon owners, which are not in it yet): stop the other server, or give this one another database.",
      );
    }
    this.lockHolder = holder;
  }

  tx<T>(fn: (tx: TxDb) => Promise<T>): Promise<T> {
    return this.db.transaction((tx) => fn(tx as unknown as TxDb));
  }

  async close(): Promise<void> {
    await closePg(this.db);
    await this.lockHolder?.end({ timeout: 5 });
    this.lockHolder = undefined;
  }
}

export async function openPgStore(options: OpenPgOptions): Promise<PgStore> {
  return new PgStore(await openPg(options));
}
