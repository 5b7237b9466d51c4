import Database from "better-sqlite3";
import { copyFileSync } from "node:fs";
import { join } from "node:path";
import { drizzle } from "drizzle-orm/better-sqlite3";
import { getTableColumns, is } from "drizzle-orm";
import { getTableConfig, type PgTable } from "drizzle-orm/pg-core";
import { SQLiteTable } from "drizzle-orm/sqlite-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createTestDatabase, type TestDatabase } from "../../testing/postgres";
import * as sqliteSchema from "../schema";
import { closePg, openPg, type PgDb } from "./client";
import { copySqliteToPostgres } from "./copy";
import { AWKWARD_JSON, buildSqliteStore, type SqliteStore } from "../../testing/pg-copy-fixture";
import { CopySourceMismatch, CopyTargetNotEmpty } from "./errors";
import * as pgSchema from "./schema";

/**
 * copySqliteToPostgres: a store written by the real server code lands in PostgreSQL row for row
 * (read back through both drizzle schemas and compared), ids kept, identities moved past them;
 * a target with rows, or a store of another version, is refused with nothing written.
 */

const BULK_EVENTS = 20_000;

let store: SqliteStore;
const databases: TestDatabase[] = [];
async function freshDatabase(): Promise<TestDatabase> {
  const db = await createTestDatabase();
  databases.push(db);
  return db;
}
beforeAll(async () => {
  const t0 = performance.now();
  store = await buildSqliteStore({ events: BULK_EVENTS });
  console.log(`sqlite store built in ${Math.round(performance.now() - t0)} ms`);
});
afterAll(async () => {
  for (const db of databases) await db.drop();
  store?.remove();
});

type Pair = { name: string; lite: SQLiteTable; pg: PgTable; keys: string[] };

/** Every table under its export name in both schemas, with its primary key as drizzle property names. */
function pairs(): Pair[] {
  return Object.entries(sqliteSchema)
    .filter(([, t]) => is(t, SQLiteTable))
    .map(([exportName, lite]) => {
      const pg = (pgSchema as Record<string, unknown>)[exportName] as PgTable;
      const cfg = getTableConfig(pg);
      const dbKeys = cfg.primaryKeys[0]?.columns.map((c) => c.name) ?? cfg.columns.filter((c) => c.primary).map((c) => c.name);
      const props = Object.entries(getTableColumns(pg));
      return { name: cfg.name, lite: lite as SQLiteTable, pg, keys: dbKeys.map((k) => props.find(([, c]) => c.name === k)![0]) };
    });
}

const byKey = (keys: string[]) => (a: Record<string, unknown>, b: Record<string, unknown>) => {
  for (const k of keys) {
    const x = a[k] as string | number;
    const y = b[k] as string | number;
    if (x !== y) return x < y ? -1 : 1;
  }
  return 0;
};

function sqliteCounts(path: string): Record<string, number> {
  const sqlite = new Database(path, { readonly: true });
  try {
    return Object.fromEntries(pairs().map((p) => [p.name, (sqlite.prepare(`SELECT count(*) AS n FROM "${p.name}"`).get() as { n: number }).n]));
  } finally {
    sqlite.close();
  }
}

describe("copySqliteToPostgres", () => {
  it("copies every table of a real store into an empty database, rows identical, ids kept, identities moved past them", async () => {
    const target = await freshDatabase();
    const expected = sqliteCounts(store.path);
    for (const [name, n] of Object.entries(expected)) expect(n, `fixture rows in ${name}`).toBeGreaterThan(0);

    const t0 = performance.now();
    const counts = await copySqliteToPostgres({ sqlitePath: store.path, url: target.url });
    const ms = performance.now() - t0;
    const total = Object.values(counts).reduce((a, b) => a + b, 0);
    console.log(`copied ${total} rows (${counts.events} events, a 1 MB log line among them) in ${Math.round(ms)} ms`);
    expect(counts).toEqual(expected);

    const sqlite = new Database(store.path, { readonly: true });
    const lite = drizzle(sqlite);
    const pg: PgDb = await openPg({ url: target.url });
    try {
      for (const p of pairs()) {
        const a = lite.select().from(p.lite).all() as Record<string, unknown>[];
        const b = (await pg.select().from(p.pg)) as Record<string, unknown>[];
        a.sort(byKey(p.keys));
        b.sort(byKey(p.keys));
        expect(b.length, p.name).toBe(a.length);
        expect(b, p.name).toEqual(a);
      }
      // the awkward text (NUL escaped in JSON, emoji, quotes) came through byte for byte
      const [first] = await pg.select().from(pgSchema.events).limit(1);
      expect(JSON.parse(first!.payload)).toEqual({ message: AWKWARD_JSON });
      expect((await pg.select().from(pgSchema.agents)).find((r) => r.id === "agent_full")).toMatchObject({ workspaceRemoved: true, runResumed: true, diskBytes: 9_007_199_254_740_991, outputOffset: 5_000_000_000 });
      const liteCost = lite.select().from(sqliteSchema.runs).all().find((r) => r.id === "run_done")?.costUsd;
      expect(liteCost).toBeGreaterThan(0);
      expect((await pg.select().from(pgSchema.runs)).find((r) => r.id === "run_done")?.costUsd).toBe(liteCost);

      // what the database hands out next follows the copied ids
      const maxEvent = Math.max(...(lite.select({ id: sqliteSchema.events.id }).from(sqliteSchema.events).all()).map((r) => r.id));
      const [next] = await pg.insert(pgSchema.events).values({ ts: Date.now(), type: "system.noted", payload: "{}" }).returning({ id: pgSchema.events.id });
      expect(next!.id).toBe(maxEvent + 1);
      const maxChunk = Math.max(...lite.select({ id: sqliteSchema.agentLogChunks.id }).from(sqliteSchema.agentLogChunks).all().map((r) => r.id));
      const [chunk] = await pg
        .insert(pgSchema.agentLogChunks)
        .values({ agentId: "agent_live", session: 9, seq: 99, firstLine: 10_000, lineCount: 1, bytes: 2, content: "{}", createdAt: 1 })
        .returning({ id: pgSchema.agentLogChunks.id });
      expect(chunk!.id).toBe(maxChunk + 1);
    } finally {
      sqlite.close();
      await closePg(pg);
    }
  });

  it("refuses a database that holds rows (CopyTargetNotEmpty naming them) and writes nothing", async () => {
    const target = await freshDatabase();
    const pg = await openPg({ url: target.url });
    try {
      await pg.insert(pgSchema.accounts).values({ id: "acct_x", provider: "claude", label: "already", kind: "api-key", secret: "s", secretHint: "…", configDir: "/c", createdAt: 1, updatedAt: 1 });
      const err = await copySqliteToPostgres({ sqlitePath: store.path, url: target.url }).catch((e: unknown) => e);
      expect(err).toBeInstanceOf(CopyTargetNotEmpty);
      expect(err).toMatchObject({ code: "DB_COPY_TARGET_NOT_EMPTY", details: { rows: { accounts: 1 } } });
      expect((err as Error).message).toMatch(/is not empty \(accounts: 1\)\. Copy into a new, empty database .*nothing was written/);
      expect(await pg.$count(pgSchema.events)).toBe(0);
      expect(await pg.$count(pgSchema.accounts)).toBe(1);
    } finally {
      await closePg(pg);
    }
  });

  it("a second copy into the database it already filled is refused too, every table left as it was", async () => {
    const target = await freshDatabase();
    const first = await copySqliteToPostgres({ sqlitePath: store.path, url: target.url });
    const err = await copySqliteToPostgres({ sqlitePath: store.path, url: target.url }).catch((e: unknown) => e);
    expect(err).toMatchObject({ code: "DB_COPY_TARGET_NOT_EMPTY", details: { rows: first } });
    const pg = await openPg({ url: target.url });
    try {
      for (const p of pairs()) expect(await pg.$count(p.pg), p.name).toBe(first[p.name]);
    } finally {
      await closePg(pg);
    }
  });

  it("refuses a store whose tables differ from this build's (CopySourceMismatch), before touching the target", async () => {
    const target = await freshDatabase();
    const older = join(store.dir, "older.db");
    copyFileSync(store.path, older);
    const sqlite = new Database(older);
    sqlite.exec("ALTER TABLE agents DROP COLUMN run_reason; ALTER TABLE runs ADD COLUMN from_the_future text");
    sqlite.close();
    const err = await copySqliteToPostgres({ sqlitePath: older, url: target.url }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(CopySourceMismatch);
    expect((err as Error).message).toMatch(/runs has columns this build does not know: from_the_future; agents lacks run_reason|agents lacks run_reason.*runs has columns this build does not know: from_the_future/);
    expect((err as Error).message).toContain("Start this version of Switchyard on it once");
    const pg = await openPg({ url: target.url });
    try {
      expect(await pg.$count(pgSchema.agents)).toBe(0);
    } finally {
      await closePg(pg);
    }
  });

  it("refuses text PostgreSQL cannot hold (a raw NUL), naming table, row and column, and rolls back what it copied", async () => {
    const target = await freshDatabase();
    const nul = join(store.dir, "nul.db");
    copyFileSync(store.path, nul);
    const sqlite = new Database(nul);
    sqlite.prepare("UPDATE conversations SET answer = ? WHERE id = 'conv_2'").run("80\u000080");
    sqlite.close();
    await expect(copySqliteToPostgres({ sqlitePath: nul, url: target.url })).rejects.toThrow("conversations.answer of row conv_2 holds a NUL character, which PostgreSQL text cannot store");
    const pg = await openPg({ url: target.url });
    try {
      expect(await pg.$count(pgSchema.events)).toBe(0);
    } finally {
      await closePg(pg);
    }
  });
});
