import { spawn } from "node:child_process";
import { readMigrationFiles } from "drizzle-orm/migrator";
import { is } from "drizzle-orm";
import { getTableConfig, PgTable } from "drizzle-orm/pg-core";
import postgres from "postgres";
import { afterAll, describe, expect, it } from "vitest";
import { REPO_ROOT } from "../../paths";
import { createTestDatabase, type TestDatabase } from "../../testing/postgres";
import { closePg, openPg, PG_MIGRATIONS_DIR } from "./client";
import { DatabaseSchemaNewer } from "./errors";
import { appliedMigrations, MIGRATION_LOCK_KEY } from "./migrations";
import * as schema from "./schema";

/** openPg on real PostgreSQL: migrations applied once under the advisory lock, a newer schema refused. */

const local = readMigrationFiles({ migrationsFolder: PG_MIGRATIONS_DIR });
const tableNames = (Object.values(schema) as unknown[]).filter((t): t is PgTable => is(t, PgTable)).map((t) => getTableConfig(t).name).sort();

const databases: TestDatabase[] = [];
async function freshDatabase(): Promise<TestDatabase> {
  const db = await createTestDatabase();
  databases.push(db);
  return db;
}
afterAll(async () => {
  for (const db of databases) await db.drop();
});

/** The same URL with a password in it: the test server trusts, so it is never checked, only carried. */
const withPassword = (url: string) => {
  const u = new URL(url);
  u.password = "Hunter2-secret";
  return u.toString();
};

async function withSql<T>(url: string, fn: (sql: postgres.Sql) => Promise<T>): Promise<T> {
  const sql = postgres(url, { max: 1, onnotice: () => {} });
  try {
    return await fn(sql);
  } finally {
    await sql.end({ timeout: 5 });
  }
}

const publicTables = (sql: postgres.Sql) =>
  sql<Array<{ tablename: string }>>`SELECT tablename FROM pg_tables WHERE schemaname = 'public' ORDER BY tablename`.then((r) => r.map((x) => x.tablename));

/** `openPg` in a separate Node process (the real two-servers-start-at-once case); resolves with its exit code and output. */
function openInChild(url: string): Promise<{ code: number | null; out: string }> {
  const code = 'import { openPg, closePg } from "./server/db/pg/client.ts"; const db = await openPg({ url: process.argv[1] }); await closePg(db); console.log("opened");';
  const child = spawn(process.execPath, ["--import", "tsx", "--input-type=module", "-e", code, url], { cwd: REPO_ROOT, stdio: ["ignore", "pipe", "pipe"] });
  let out = "";
  child.stdout.on("data", (d: Buffer) => (out += d.toString()));
  child.stderr.on("data", (d: Buffer) => (out += d.toString()));
  return new Promise((resolve) => child.once("exit", (code) => resolve({ code, out })));
}

describe("openPg", () => {
  it("migrates an empty database: every table of the schema, each migration recorded once; a second open applies nothing", async () => {
    const { url } = await freshDatabase();
    const db = await openPg({ url });
    try {
      const rows = await db.insert(schema.events).values({ ts: 1_795_000_000_000, type: "system.noted", payload: '{"message":"hi"}' }).returning();
      expect(rows).toEqual([{ id: 1, ts: 1_795_000_000_000, type: "system.noted", runId: null, agentId: null, daemonId: null, conversationId: null, payload: '{"message":"hi"}' }]);
      const [agent] = await db
        .insert(schema.agents)
        .values({ id: "a1", alias: "a", provider: "fake", status: "idle", mode: "execute", permissionMode: "ask", prompt: "p", task: "t", workspacePath: "/w", workspaceKind: "worktree", configDir: "/c", createdAt: 1, updatedAt: 2 })
        .returning();
      expect(agent).toMatchObject({ workspaceRemoved: false, runResumed: false, pendingQuestions: "[]", usageTotal: "{}", outputOffset: 0, version: 0 });
    } finally {
      await closePg(db);
    }
    await withSql(url, async (sql) => {
      expect(await publicTables(sql)).toEqual(tableNames);
      expect((await appliedMigrations(sql)).map((m) => m.createdAt)).toEqual(local.map((m) => m.folderMillis));
    });
    await closePg(await openPg({ url }));
    await withSql(url, async (sql) => expect(await appliedMigrations(sql)).toHaveLength(local.length));
  });

  it("two processes starting at once on an empty database both succeed, the migrations applied once (they queue on the advisory lock)", async () => {
    const { url } = await freshDatabase();
    await withSql(url, async (holder) => {
      // hold the lock so both children are provably waiting on it at the same time
      await holder.unsafe(`SELECT pg_advisory_lock(${MIGRATION_LOCK_KEY})`);
      const children = [openInChild(url), openInChild(url)];
      const waiting = async () =>
        Number((await holder<Array<{ n: string }>>`SELECT count(*) AS n FROM pg_locks WHERE locktype = 'advisory' AND objid = ${MIGRATION_LOCK_KEY} AND NOT granted`)[0]!.n);
      const deadline = Date.now() + 30_000;
      while ((await waiting()) < 2 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
      expect(await waiting()).toBe(2);
      await holder.unsafe(`SELECT pg_advisory_unlock(${MIGRATION_LOCK_KEY})`);
      const results = await Promise.all(children);
      for (const r of results) expect(r, r.out).toMatchObject({ code: 0 });
      expect(await appliedMigrations(holder)).toHaveLength(local.length);
      expect(await publicTables(holder)).toEqual(tableNames);
    });
  });

  it("four opens racing in one process on an empty database all succeed", async () => {
    const { url } = await freshDatabase();
    const dbs = await Promise.all([1, 2, 3, 4].map(() => openPg({ url })));
    await Promise.all(dbs.map(closePg));
    await withSql(url, async (sql) => expect(await appliedMigrations(sql)).toHaveLength(local.length));
  });

  it("refuses a database migrated by a newer Switchyard (a migration this build does not know): DB_SCHEMA_NEWER, upgrade Switchyard", async () => {
    const { url } = await freshDatabase();
    await closePg(await openPg({ url }));
    const future = Math.max(...local.map((m) => m.folderMillis)) + 86_400_000;
    await withSql(url, (sql) => sql`INSERT INTO drizzle.__drizzle_migrations (hash, created_at) VALUES ('from-a-newer-build', ${future})`);
    const err = await openPg({ url: withPassword(url) }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(DatabaseSchemaNewer);
    expect(err).toMatchObject({ code: "DB_SCHEMA_NEWER", details: { unknown: [{ hash: "from-a-newer-build", createdAt: future }] } });
    expect((err as Error).message).toMatch(/1 migration\(s\) this Switchyard does not know .* Upgrade Switchyard/);
    expect((err as Error).message).toContain(new Date(future).toISOString());
    expect((err as Error).message).not.toContain("Hunter2");
    // nothing changed, and the lock was let go: the holder of a newer build is not blocked
    await withSql(url, async (sql) => {
      expect(await appliedMigrations(sql)).toHaveLength(local.length + 1);
      expect((await sql`SELECT pg_try_advisory_lock(${MIGRATION_LOCK_KEY}) AS ok`)[0]!.ok).toBe(true);
    });
  });

  it("a database that does not exist fails with DB_UNREACHABLE naming the variable, not the password", async () => {
    const { url } = await freshDatabase();
    const missing = new URL(withPassword(url));
    missing.pathname = "/switchyard_no_such_database";
    const err = await openPg({ url: missing.toString() }).catch((e: unknown) => e);
    expect(err).toMatchObject({ code: "DB_UNREACHABLE" });
    expect((err as Error).message).toMatch(/SWITCHYARD_DATABASE_URL\): 3D000: database "switchyard_no_such_database" does not exist/);
    expect(JSON.stringify([(err as Error).message, (err as { details?: unknown }).details])).not.toContain("Hunter2");
  });
});
