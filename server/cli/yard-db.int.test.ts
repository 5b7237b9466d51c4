import postgres from "postgres";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { buildSqliteStore, type SqliteStore } from "../testing/pg-copy-fixture";
import { createTestDatabase, type TestDatabase } from "../testing/postgres";
import { yard } from "../testing/cli-harness";

/** `yard db copy`: a SQLite data dir into an empty PostgreSQL database, through the CLI. */
let store: SqliteStore;
let pg: TestDatabase;

beforeAll(async () => {
  store = await buildSqliteStore({ events: 500 });
  pg = await createTestDatabase();
});
afterAll(async () => {
  store?.remove();
  await pg?.drop();
});

describe("yard db copy", () => {
  it("copies every table (events keep their ids), prints the counts with the password hidden, and refuses a database that is not empty", async () => {
    const url = pg.url.replace("postgres://postgres@", "postgres://postgres:hunter22@");
    const r = await yard(["db", "copy", "--from", store.path, "--to", url, "--json"]);
    expect(r.err).toBe("");
    expect(r.code).toBe(0);
    const out = JSON.parse(r.out) as { from: string; to: string; tables: Record<string, number> };
    expect(out.to).not.toContain("hunter22");
    expect(out.tables.events).toBeGreaterThanOrEqual(500);
    const sql = postgres(pg.url, { max: 1, onnotice: () => {} });
    try {
      const [row] = await sql<Array<{ n: string; max: string }>>`SELECT count(*)::text AS n, max(id)::text AS max FROM events`;
      expect(Number(row!.n)).toBe(out.tables.events);
      expect(Number(row!.max)).toBe(out.tables.events); // ids kept: 1..n
    } finally {
      await sql.end();
    }
    const again = await yard(["db", "copy", "--from", store.path, "--to", url]);
    expect(again.code).toBe(1);
    expect(again.err).toMatch(/not empty/i);
    expect(again.err).not.toContain("hunter22");
    const missing = await yard(["db", "copy", "--from", "/nowhere/switchyard.db", "--to", url]);
    expect(missing.code).toBe(1);
    expect(missing.err).toContain("no SQLite store at /nowhere/switchyard.db");
  });
});
