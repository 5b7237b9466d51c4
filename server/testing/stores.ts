import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import postgres from "postgres";
import { openPgStore } from "../db/pg/pg-store";
import { openSqliteStore } from "../db/sqlite-store";
import type { Store } from "../db/store";
import { REPO_ROOT } from "../paths";
import { createTestDatabase, type TestDatabase } from "./postgres";

export type StoreKind = "sqlite" | "postgres";
/** Both stores: a suite that runs `describe.each(STORE_KINDS)` holds on each. */
export const STORE_KINDS: StoreKind[] = ["sqlite", "postgres"];

/**
 * Test support: stores for one test file. `fresh(kind)` opens a store on an empty database (a new
 * SQLite file; on PostgreSQL the file's one database, emptied); `again(store)` opens a second
 * store on the same database (another server, or the same one after a restart); `close()` closes
 * every store and drops the database (afterAll).
 */
export function testStores() {
  let pg: TestDatabase | undefined;
  const opened: Store[] = [];
  const dirs: string[] = [];
  const where = new Map<Store, { kind: StoreKind; path?: string }>();

  const open = async (kind: StoreKind, path?: string): Promise<Store> => {
    let store: Store;
    if (kind === "sqlite") store = openSqliteStore({ path: path!, migrationsDir: join(REPO_ROOT, "drizzle") });
    else store = await openPgStore({ url: pg!.url, max: 4 });
    opened.push(store);
    where.set(store, { kind, path });
    return store;
  };

  return {
    async fresh(kind: StoreKind): Promise<Store> {
      if (kind === "sqlite") {
        const dir = mkdtempSync(join(tmpdir(), "switchyard-store-"));
        dirs.push(dir);
        return open(kind, join(dir, "switchyard.db"));
      }
      pg ??= await createTestDatabase();
      const store = await open(kind);
      await emptyPg(pg.url);
      return store;
    },
    again(store: Store): Promise<Store> {
      const at = where.get(store);
      if (!at) throw new Error("again(): not a store of this fixture");
      return open(at.kind, at.path);
    },
    async close(): Promise<void> {
      await Promise.all(opened.splice(0).map((s) => s.close().catch(() => {})));
      for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
      await pg?.drop();
      pg = undefined;
    },
  };
}

/** Every table of the database emptied, identities restarted (the migrations' bookkeeping kept). */
async function emptyPg(url: string): Promise<void> {
  const sql = postgres(url, { max: 1, onnotice: () => {} });
  try {
    const tables = await sql<Array<{ name: string }>>`SELECT tablename AS name FROM pg_tables WHERE schemaname = 'public'`;
    if (tables.length > 0) await sql.unsafe(`TRUNCATE ${tables.map((t) => `"${t.name}"`).join(", ")} RESTART IDENTITY CASCADE`);
  } finally {
    await sql.end({ timeout: 5 });
  }
}
