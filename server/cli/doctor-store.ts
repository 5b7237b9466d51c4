import { existsSync } from "node:fs";
import type { Sql } from "postgres";
import type { Config } from "../config";
import type { Check } from "./doctor";

/**
 * `yard doctor`'s database check: the store `yard start` would open (SQLite in the data dir, or
 * PostgreSQL at SWITCHYARD_DATABASE_URL), and the usable registered accounts per provider read
 * from it (the credential checks count them when no server answers). A PostgreSQL URL is shown
 * with its password as `***`, and so is any error message that could hold it.
 */

export type AccountCounts = { counts: Record<string, number>; source: string } | { error: string };

export type StoreReport = { check: Check; accounts: AccountCounts };

const base = { id: "database", title: "database" } as const;
const DATABASE_URL_VAR = "SWITCHYARD_DATABASE_URL";

/** `config` may be the defaults (the real one did not parse): the URL is then read from `env` as written. */
export function storeCheck(config: Config, env: Record<string, string | undefined>): Promise<StoreReport> {
  const url = config.databaseUrl ?? (env[DATABASE_URL_VAR]?.trim() || undefined);
  return url ? postgresCheck(url) : sqliteCheck(config.dbPath);
}

async function sqliteCheck(dbPath: string): Promise<StoreReport> {
  if (!existsSync(dbPath)) return { check: { ...base, status: "ok", detail: `SQLite ${dbPath} (made at the first start)` }, accounts: { counts: {}, source: "no database yet" } };
  try {
    const { default: Database } = await import("better-sqlite3");
    const { drizzle } = await import("drizzle-orm/better-sqlite3");
    const { count, isNull } = await import("drizzle-orm");
    const { accounts } = await import("../accounts/accounts.sql");
    const sqlite = new Database(dbPath, { readonly: true, fileMustExist: true });
    try {
      const rows = drizzle(sqlite).select({ provider: accounts.provider, n: count() }).from(accounts).where(isNull(accounts.invalidReason)).groupBy(accounts.provider).all();
      return { check: { ...base, status: "ok", detail: `SQLite ${dbPath}` }, accounts: { counts: Object.fromEntries(rows.map((r) => [r.provider, r.n])), source: dbPath } };
    } finally {
      sqlite.close();
    }
  } catch (err) {
    const error = `cannot read the accounts in ${dbPath}: ${(err as Error).message}`;
    return { check: { ...base, status: "warn", detail: `SQLite ${dbPath}: ${error}`, fix: `check that ${dbPath} is readable; yard start says what is wrong with it` }, accounts: { error } };
  }
}

async function postgresCheck(url: string): Promise<StoreReport> {
  const [{ checkDatabaseUrl, redactDatabaseUrl, scrubPassword }, { clientOptions, connectionErrorReason }] = await Promise.all([import("../db/pg/url"), import("../db/pg/client")]);
  const shown = redactDatabaseUrl(url);
  try {
    checkDatabaseUrl(url);
  } catch (err) {
    const detail = scrubPassword((err as Error).message, url);
    return { check: { ...base, status: "fail", detail, fix: `${DATABASE_URL_VAR}=postgres://user:password@host:5432/database` }, accounts: { error: detail } };
  }
  const { default: postgres } = await import("postgres");
  const sql = postgres(url, clientOptions(1, 3));
  try {
    let version: string;
    try {
      const [row] = await sql<Array<{ server_version: string }>>`SHOW server_version`;
      version = row?.server_version.split(" ")[0] ?? "?"; // "15.20 (Debian 15.20-0+deb12u1)"
    } catch (err) {
      const reason = scrubPassword(connectionErrorReason(err), url);
      const check: Check = {
        ...base,
        status: "fail",
        detail: `cannot connect to PostgreSQL at ${shown} (${DATABASE_URL_VAR}): ${reason}`,
        fix: `start PostgreSQL, or correct the host, port, user, password or database in ${DATABASE_URL_VAR}`,
      };
      return { check, accounts: { error: `the database at ${shown} is unreachable` } };
    }
    return await postgresState(sql, url, `PostgreSQL ${version} at ${shown}`);
  } finally {
    await sql.end({ timeout: 2 }).catch(() => undefined);
  }
}

/** A reachable database: its schema against this build's migrations, and its accounts. */
async function postgresState(sql: Sql, url: string, where: string): Promise<StoreReport> {
  const [{ appliedMigrations }, { PG_MIGRATIONS_DIR }, { readMigrationFiles }, { scrubPassword }] = await Promise.all([
    import("../db/pg/migrations"),
    import("../db/pg/client"),
    import("drizzle-orm/migrator"),
    import("../db/pg/url"),
  ]);
  try {
    const applied = await appliedMigrations(sql);
    const known = new Set(readMigrationFiles({ migrationsFolder: PG_MIGRATIONS_DIR }).map((m) => m.folderMillis));
    const unknown = applied.filter((m) => !known.has(m.createdAt)).length;
    if (unknown > 0) {
      const check: Check = { ...base, status: "fail", detail: `${where}: ${unknown} migration(s) this Switchyard does not know (a newer one set it up)`, fix: "upgrade Switchyard to the version that set up the database, or later" };
      return { check, accounts: await postgresAccounts(sql, url) };
    }
    if (applied.length === 0) return { check: { ...base, status: "ok", detail: `${where} (empty: the first yard start sets it up)` }, accounts: { counts: {}, source: "an empty database" } };
    const pending = known.size - applied.length;
    const detail = `${where}${pending > 0 ? ` (${pending} migration(s) to apply at the next yard start)` : ""}`;
    return { check: { ...base, status: "ok", detail }, accounts: await postgresAccounts(sql, url) };
  } catch (err) {
    const reason = scrubPassword((err as Error).message, url);
    return { check: { ...base, status: "warn", detail: `${where}: cannot read its schema (${reason})`, fix: `check that the user in ${DATABASE_URL_VAR} may read the database` }, accounts: { error: reason } };
  }
}

async function postgresAccounts(sql: Sql, url: string): Promise<AccountCounts> {
  const [{ drizzle }, { count, isNull }, { accounts }, { redactDatabaseUrl, scrubPassword }] = await Promise.all([
    import("drizzle-orm/postgres-js"),
    import("drizzle-orm"),
    import("../db/pg/accounts.sql"),
    import("../db/pg/url"),
  ]);
  try {
    const rows = await drizzle(sql).select({ provider: accounts.provider, n: count() }).from(accounts).where(isNull(accounts.invalidReason)).groupBy(accounts.provider);
    return { counts: Object.fromEntries(rows.map((r) => [r.provider, r.n])), source: redactDatabaseUrl(url) };
  } catch (err) {
    return { error: `cannot read the accounts in ${redactDatabaseUrl(url)}: ${scrubPassword((err as Error).message, url)}` };
  }
}
