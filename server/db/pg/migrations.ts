import { drizzle } from "drizzle-orm/postgres-js";
import { readMigrationFiles } from "drizzle-orm/migrator";
import { migrate } from "drizzle-orm/postgres-js/migrator";
import type { Sql } from "postgres";
import { DATABASE_URL_VAR, DatabaseSchemaNewer } from "./errors";

/**
 * The advisory lock every Switchyard process takes before it looks at or applies migrations, so
 * two servers starting at once on an empty database migrate it once. A constant: servers of
 * different versions must exclude each other too.
 */
export const MIGRATION_LOCK_KEY = 7_422_018;

/** Where drizzle's migrator records what it applied (its defaults). */
const MIGRATIONS_TABLE = "drizzle.__drizzle_migrations";

export type AppliedMigration = { hash: string; createdAt: number };

/** The migrations recorded in the database, oldest first ([] on a fresh database). */
export async function appliedMigrations(sql: Sql): Promise<AppliedMigration[]> {
  const [found] = await sql<Array<{ table: string | null }>>`SELECT to_regclass(${MIGRATIONS_TABLE})::text AS table`;
  if (!found?.table) return [];
  const rows = await sql<Array<{ hash: string; created_at: string }>>`SELECT hash, created_at FROM drizzle.__drizzle_migrations ORDER BY created_at, id`;
  return rows.map((r) => ({ hash: r.hash, createdAt: Number(r.created_at) }));
}

/**
 * Apply the pending migrations of `migrationsDir` under the advisory lock, after refusing a
 * database that holds migrations this build does not know (a newer Switchyard migrated it).
 * `sql` must be a one-connection client (`max: 1`): the session that holds the lock runs them.
 * Returns how many migrations this call applied.
 */
export async function migratePg(sql: Sql, migrationsDir: string): Promise<{ applied: number; total: number }> {
  const local = readMigrationFiles({ migrationsFolder: migrationsDir });
  await sql.unsafe(`SELECT pg_advisory_lock(${MIGRATION_LOCK_KEY})`);
  try {
    const before = await appliedMigrations(sql);
    refuseUnknown(before, local.map((m) => m.folderMillis));
    if (before.length < local.length) await migrate(drizzle(sql), { migrationsFolder: migrationsDir });
    const after = await appliedMigrations(sql);
    return { applied: after.length - before.length, total: after.length };
  } finally {
    await sql.unsafe(`SELECT pg_advisory_unlock(${MIGRATION_LOCK_KEY})`).catch(() => undefined);
  }
}

function refuseUnknown(applied: AppliedMigration[], known: number[]): void {
  const knownSet = new Set(known);
  const unknown = applied.filter((m) => !knownSet.has(m.createdAt));
  if (unknown.length === 0) return;
  const latestKnown = Math.max(0, ...known);
  const newest = Math.max(...unknown.map((m) => m.createdAt));
  throw new DatabaseSchemaNewer(
    `The database at ${DATABASE_URL_VAR} has ${unknown.length} migration(s) this Switchyard does not know (the newest from ` +
      `${new Date(newest).toISOString()}; this build knows migrations up to ${new Date(latestKnown).toISOString()}): a newer Switchyard ` +
      `set it up. Upgrade Switchyard to that version or later; this one refuses to run on a schema it does not know.`,
    { unknown, latestKnown },
  );
}
