import Database from "better-sqlite3";
import { drizzle, type BetterSQLite3Database } from "drizzle-orm/better-sqlite3";
import { migrate } from "drizzle-orm/better-sqlite3/migrator";
import { readMigrationFiles } from "drizzle-orm/migrator";
import { mkdirSync } from "node:fs";
import { dirname } from "node:path";
import { startCheckpointer, type Checkpointer } from "./checkpointer";
import * as schema from "./schema";

const checkpointers = new WeakMap<Database.Database, Checkpointer>();

export type Db = BetterSQLite3Database<typeof schema> & { $client: Database.Database };

export type OpenDbOptions = {
  path: string;
  migrationsDir: string;
  /** "normal" survives a process crash; "full" also an OS crash. */
  durability?: "normal" | "full";
};

/** Open the SQLite store: WAL, foreign keys, busy timeout, then apply pending migrations. */
export function openDb({ path, migrationsDir, durability = "normal" }: OpenDbOptions): Db {
  if (path !== ":memory:") mkdirSync(dirname(path), { recursive: true });
  const sqlite = new Database(path);
  sqlite.pragma("journal_mode = WAL");
  sqlite.pragma(`synchronous = ${durability === "full" ? "FULL" : "NORMAL"}`);
  sqlite.pragma("foreign_keys = ON");
  sqlite.pragma("busy_timeout = 5000");
  sqlite.pragma("temp_store = MEMORY");
  sqlite.pragma("cache_size = -32000");
  const db = drizzle(sqlite, { schema }) as Db;
  try {
    refuseNewerSchema(sqlite, path, migrationsDir);
  } catch (err) {
    sqlite.close();
    throw err;
  }
  migrate(db, { migrationsFolder: migrationsDir });
  if (path !== ":memory:") {
    // checkpoints happen in a worker, not inside some unlucky commit on the event loop
    sqlite.pragma("wal_autocheckpoint = 0");
    checkpointers.set(sqlite, startCheckpointer(path));
  }
  return db;
}

export function closeDb(db: Db): void {
  if (!db.$client.open) return;
  void checkpointers.get(db.$client)?.stop();
  try {
    db.$client.pragma("wal_checkpoint(PASSIVE)");
  } finally {
    db.$client.close();
  }
}

/** The store holds migrations this build does not know: a newer Switchyard made it. */
export class SchemaNewerError extends Error {
  readonly code = "DB_SCHEMA_NEWER";
}

/**
 * An older Switchyard on a data dir a newer one migrated would run on a schema it does not know:
 * refused, with what to do, before anything is written.
 */
function refuseNewerSchema(sqlite: Database.Database, path: string, migrationsDir: string): void {
  const table = sqlite.prepare("SELECT name FROM sqlite_master WHERE type = 'table' AND name = '__drizzle_migrations'").get();
  if (!table) return;
  const known = new Set(readMigrationFiles({ migrationsFolder: migrationsDir }).map((m) => m.folderMillis));
  const applied = sqlite.prepare("SELECT created_at AS at FROM __drizzle_migrations").all() as Array<{ at: number | string }>;
  const unknown = applied.map((r) => Number(r.at)).filter((at) => !known.has(at));
  if (unknown.length === 0) return;
  const newest = new Date(Math.max(...unknown)).toISOString();
  throw new SchemaNewerError(
    `The data in ${path} was set up by a newer Switchyard (${unknown.length} migration(s) this version does not know, the newest from ${newest}). ` +
      "Upgrade Switchyard (npm install -g @switchyard-dev/yard@latest, or git pull && npm ci in a clone), or point SWITCHYARD_HOME at another data dir.",
  );
}
