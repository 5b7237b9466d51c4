import { drizzle, type PostgresJsDatabase } from "drizzle-orm/postgres-js";
import postgres, { type Sql } from "postgres";
import { join } from "node:path";
import { REPO_ROOT } from "../../paths";
import { DATABASE_URL_VAR, DatabaseUnreachable } from "./errors";
import { migratePg } from "./migrations";
import * as schema from "./schema";
import { checkDatabaseUrl, redactDatabaseUrl, scrubPassword } from "./url";

export type PgDb = PostgresJsDatabase<typeof schema> & { $client: Sql };

/** drizzle-kit's output for the pg-core schema (`npm run db:generate:pg`). */
export const PG_MIGRATIONS_DIR = join(REPO_ROOT, "drizzle-pg");

export type OpenPgOptions = {
  /** SWITCHYARD_DATABASE_URL: postgres://user:password@host:port/database */
  url: string;
  migrationsDir?: string;
  /** Connections in the pool (default 10). */
  max?: number;
  /** Give up connecting after this long (default 5 s): an unreachable database fails fast. */
  connectTimeoutSeconds?: number;
};

/** postgres.js client options shared by every connection Switchyard opens. */
export function clientOptions(max: number, connectTimeoutSeconds: number, opts: { idleInTransactionMs?: number } = {}): postgres.Options<Record<string, postgres.PostgresType>> {
  return {
    max,
    connect_timeout: connectTimeoutSeconds,
    // notices ("schema already exists, skipping") are not worth a line on stderr
    onnotice: () => {},
    connection: { application_name: "switchyard", ...(opts.idleInTransactionMs ? { idle_in_transaction_session_timeout: opts.idleInTransactionMs } : {}) },
  };
}

/**
 * A transaction of ours never waits on anything but the database (STYLE: a tx body touches only
 * its tx), so one idle this long belongs to a server that stopped dead (a pause, a frozen VM)
 * while holding locks: the events' append lock would stop every server's writes. PostgreSQL ends
 * that session, and its locks go with it, by the time its leases expire (LEASE_TTL_MS).
 */
export const IDLE_IN_TRANSACTION_MS = 10_000;

/**
 * Open the PostgreSQL store: apply pending migrations under the advisory lock on a connection of
 * its own (refusing a schema newer than this build), then the pool. An unreachable database
 * fails within `connectTimeoutSeconds`, naming SWITCHYARD_DATABASE_URL, never its password.
 */
export async function openPg({ url, migrationsDir = PG_MIGRATIONS_DIR, max = 10, connectTimeoutSeconds = 5 }: OpenPgOptions): Promise<PgDb> {
  checkDatabaseUrl(url);
  const migrator = postgres(url, clientOptions(1, connectTimeoutSeconds));
  try {
    await reach(migrator, url);
    await migratePg(migrator, migrationsDir);
  } finally {
    await migrator.end({ timeout: 5 });
  }
  return drizzle(postgres(url, clientOptions(max, connectTimeoutSeconds, { idleInTransactionMs: IDLE_IN_TRANSACTION_MS })), { schema }) as PgDb;
}

export async function closePg(db: PgDb): Promise<void> {
  await db.$client.end({ timeout: 5 });
}

/** The first round trip, with a connection failure turned into DatabaseUnreachable. */
async function reach(sql: Sql, url: string): Promise<void> {
  try {
    await sql`SELECT 1`;
  } catch (err) {
    const reason = scrubPassword(connectionErrorReason(err), url);
    throw new DatabaseUnreachable(
      `Cannot connect to PostgreSQL at ${redactDatabaseUrl(url)} (${DATABASE_URL_VAR}): ${reason}. ` +
        `Check that the server is running and that ${DATABASE_URL_VAR} names the right host, port, user, password and database.`,
      { target: redactDatabaseUrl(url), reason },
    );
  }
}

/** Why a connection failed, in one line (not yet scrubbed of the URL's password). */
export function connectionErrorReason(err: unknown): string {
  if (!(err instanceof Error)) return String(err);
  const code = (err as { code?: unknown }).code;
  const errors = (err as { errors?: unknown }).errors;
  // Node's AggregateError (every address of a host refused) has an empty message
  const message = err.message || (Array.isArray(errors) ? errors.map((e) => (e instanceof Error ? e.message : String(e))).join("; ") : "");
  return typeof code === "string" && !message.includes(code) ? `${code}: ${message}` : message;
}
