import { is, SQL } from "drizzle-orm";
import { bigint as pgBigint, getTableConfig as pgConfig, PgDialect, PgTable, pgTable, text as pgText } from "drizzle-orm/pg-core";
import { getTableConfig as sqliteConfig, integer, SQLiteSyncDialect, SQLiteTable, sqliteTable, text } from "drizzle-orm/sqlite-core";
import { describe, expect, it } from "vitest";
import * as sqliteSchema from "../schema";
import * as pgSchema from "./schema";

/**
 * The PostgreSQL schema is a twin of the SQLite one: every table, column, default, primary key and
 * index has its counterpart under the same name. A column added on one side only fails here.
 */

/** Which pg column types may stand for a sqlite one (integers keep their values: bigint or integer). */
const TYPE_TWINS: Record<string, string[]> = {
  SQLiteInteger: ["PgBigInt53", "PgInteger"],
  SQLiteBoolean: ["PgBoolean"],
  SQLiteText: ["PgText"],
  SQLiteReal: ["PgDoublePrecision"],
};

/** Integer keys the database hands out: identities on PostgreSQL that accept given ids (a copy keeps them). */
const IDENTITY_KEYS = ["events.id", "agent_log_chunks.id"];

const sqliteSql = new SQLiteSyncDialect();
const pgSql = new PgDialect();
const predicate = (w: SQL | undefined, dialect: SQLiteSyncDialect | PgDialect) => (w && is(w, SQL) ? dialect.sqlToQuery(w).sql : null);
const json = (v: unknown) => JSON.stringify(v);

/** Everything that differs between the two schemas, one readable line each. */
function differences(liteTables: SQLiteTable[], pgTables: PgTable[]): string[] {
  const out: string[] = [];
  const pgByName = new Map(pgTables.map((t) => [pgConfig(t).name, pgConfig(t)]));
  const liteNames = new Set(liteTables.map((t) => sqliteConfig(t).name));
  for (const name of pgByName.keys()) if (!liteNames.has(name)) out.push(`${name}: only in pg`);
  for (const table of liteTables) {
    const lite = sqliteConfig(table);
    const pg = pgByName.get(lite.name);
    if (!pg) {
      out.push(`${lite.name}: no pg table in server/db/pg/`);
      continue;
    }
    const pgCols = new Map(pg.columns.map((c) => [c.name, c]));
    for (const c of pg.columns) if (!lite.columns.some((l) => l.name === c.name)) out.push(`${lite.name}.${c.name}: only in pg`);
    for (const col of lite.columns) {
      const at = `${lite.name}.${col.name}`;
      const twin = pgCols.get(col.name);
      if (!twin) {
        out.push(`${at}: no pg column`);
        continue;
      }
      if (twin.notNull !== col.notNull) out.push(`${at}: notNull ${col.notNull} on sqlite, ${twin.notNull} on pg`);
      if (twin.primary !== col.primary) out.push(`${at}: primary ${col.primary} on sqlite, ${twin.primary} on pg`);
      if (json(twin.default) !== json(col.default)) out.push(`${at}: default ${json(col.default)} on sqlite, ${json(twin.default)} on pg`);
      if (json(twin.enumValues ?? null) !== json(col.enumValues ?? null)) out.push(`${at}: enum ${json(col.enumValues)} on sqlite, ${json(twin.enumValues)} on pg`);
      if (!TYPE_TWINS[col.columnType]?.includes(twin.columnType)) out.push(`${at}: ${col.columnType} on sqlite, ${twin.columnType} on pg`);
      const identity = (twin as { generatedIdentity?: { type: string } }).generatedIdentity?.type;
      const wanted = IDENTITY_KEYS.includes(at) ? "byDefault" : undefined;
      if (identity !== wanted) out.push(`${at}: identity ${identity} on pg, expected ${wanted}`);
    }
    const keys = (pks: Array<{ columns: Array<{ name: string }> }>) => json(pks.map((k) => k.columns.map((c) => c.name)));
    if (keys(pg.primaryKeys) !== keys(lite.primaryKeys)) out.push(`${lite.name}: primary key ${keys(lite.primaryKeys)} on sqlite, ${keys(pg.primaryKeys)} on pg`);
    for (const kind of ["foreignKeys", "uniqueConstraints", "checks"] as const) {
      if (pg[kind].length !== lite[kind].length) out.push(`${lite.name}: ${lite[kind].length} ${kind} on sqlite, ${pg[kind].length} on pg`);
    }
    const index = (i: { config: { name?: string; unique: boolean; columns: unknown[]; where?: SQL } }, dialect: SQLiteSyncDialect | PgDialect) =>
      json({ unique: i.config.unique, columns: i.config.columns.map((c) => (c as { name: string }).name), where: predicate(i.config.where, dialect) });
    const pgIdx = new Map(pg.indexes.map((i) => [i.config.name, index(i, pgSql)]));
    for (const i of lite.indexes) {
      const mine = index(i, sqliteSql);
      const twin = pgIdx.get(i.config.name);
      if (twin !== mine) out.push(`${lite.name}: index ${i.config.name} ${mine} on sqlite, ${twin ?? "missing"} on pg`);
      pgIdx.delete(i.config.name);
    }
    for (const name of pgIdx.keys()) out.push(`${lite.name}: index ${name} only in pg`);
  }
  return out;
}

const liteTables = (Object.values(sqliteSchema) as unknown[]).filter((t): t is SQLiteTable => is(t, SQLiteTable));
const pgTables = (Object.values(pgSchema) as unknown[]).filter((t): t is PgTable => is(t, PgTable));

describe("the pg schema mirrors the sqlite schema", () => {
  it("every table, column (nullability, default, enum, type), primary key and index has its twin", () => {
    expect(liteTables.length).toBeGreaterThanOrEqual(11);
    expect(differences(liteTables, pgTables)).toEqual([]);
  });

  it("a sqlite column without its pg twin, or a changed nullability, is reported", () => {
    const lite = sqliteTable("things", { id: integer("id").primaryKey(), name: text("name").notNull(), added: text("added") });
    const pg = pgTable("things", { id: pgBigint("id", { mode: "number" }).primaryKey(), name: pgText("name") });
    expect(differences([lite], [pg])).toEqual(["things.name: notNull true on sqlite, false on pg", "things.added: no pg column"]);
    expect(differences([lite], [])).toEqual(["things: no pg table in server/db/pg/"]);
  });
});
