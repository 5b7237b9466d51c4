import Database from "better-sqlite3";
import { drizzle, type BetterSQLite3Database } from "drizzle-orm/better-sqlite3";
import { migrate } from "drizzle-orm/better-sqlite3/migrator";
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
