import Database from "better-sqlite3";
import { is } from "drizzle-orm";
import { getTableConfig, PgTable } from "drizzle-orm/pg-core";
import { existsSync } from "node:fs";
import type { TransactionSql } from "postgres";
import { closePg, openPg, PG_MIGRATIONS_DIR } from "./client";
import { CopySourceMismatch, CopyTargetNotEmpty, DATABASE_URL_VAR } from "./errors";
import * as pgSchema from "./schema";
import { redactDatabaseUrl } from "./url";

export type CopyOptions = {
  /** The SQLite store (`$SWITCHYARD_HOME/switchyard.db`), opened read-only. */
  sqlitePath: string;
  /** The target PostgreSQL database: migrated first, and it must hold no rows. */
  url: string;
  migrationsDir?: string;
  /** Most rows per INSERT (fewer when the columns or the bytes add up). */
  batchRows?: number;
};

/** Rows copied, per table. */
export type CopyCounts = Record<string, number>;

/** Bind parameters per statement stay under PostgreSQL's 65,535; bytes per statement under this. */
const MAX_PARAMS = 60_000;
const MAX_BATCH_BYTES = 8 * 1024 * 1024;

type TablePlan = { name: string; columns: string[]; booleans: Set<string>; identity: string | null };

/** Every table of the pg schema: its columns in order, which are booleans, its identity column. */
function plans(): TablePlan[] {
  return (Object.values(pgSchema) as unknown[])
    .filter((t): t is PgTable => is(t, PgTable))
    .map((t) => {
      const c = getTableConfig(t);
      return {
        name: c.name,
        columns: c.columns.map((col) => col.name),
        booleans: new Set(c.columns.filter((col) => col.columnType === "PgBoolean").map((col) => col.name)),
        identity: c.columns.find((col) => (col as { generatedIdentity?: unknown }).generatedIdentity)?.name ?? null,
      };
    });
}

const quote = (name: string) => `"${name.replace(/"/g, '""')}"`;

/**
 * Copy a SQLite store into an empty PostgreSQL database: every table, rows identical (SQLite's
 * 0/1 booleans become booleans), events and log chunks keep their ids and the identities move
 * past them. One PostgreSQL transaction (the tables locked, emptiness checked inside it), reading
 * one SQLite snapshot, in batched INSERTs. Refuses a target with rows (CopyTargetNotEmpty) and a
 * store whose tables differ from this build's (CopySourceMismatch). Stop the server first: writes
 * it makes after the snapshot are not copied.
 */
export async function copySqliteToPostgres({ sqlitePath, url, migrationsDir = PG_MIGRATIONS_DIR, batchRows = 1000 }: CopyOptions): Promise<CopyCounts> {
  if (!existsSync(sqlitePath)) throw new Error(`No SQLite store at ${sqlitePath}`);
  const sqlite = new Database(sqlitePath, { readonly: true, fileMustExist: true });
  try {
    const tables = plans();
    checkSource(sqlite, tables, sqlitePath);
    const db = await openPg({ url, migrationsDir, max: 1 });
    try {
      return await db.$client.begin(async (tx) => {
        await tx.unsafe(`LOCK TABLE ${tables.map((t) => quote(t.name)).join(", ")} IN ACCESS EXCLUSIVE MODE`);
        await refuseRows(tx, tables, url);
        sqlite.exec("BEGIN"); // one read snapshot for every table
        try {
          const counts: CopyCounts = {};
          for (const table of tables) counts[table.name] = await copyTable(sqlite, tx, table, batchRows);
          return counts;
        } finally {
          sqlite.exec("COMMIT");
        }
      });
    } finally {
      await closePg(db);
    }
  } finally {
    sqlite.close();
  }
}

/** The store must have exactly this build's tables and columns (else it was written by another version). */
function checkSource(sqlite: Database.Database, tables: TablePlan[], path: string): void {
  const problems: string[] = [];
  for (const t of tables) {
    const have = (sqlite.prepare(`PRAGMA table_info(${quote(t.name)})`).all() as Array<{ name: string }>).map((c) => c.name);
    if (have.length === 0) {
      problems.push(`table ${t.name} is missing`);
      continue;
    }
    const missing = t.columns.filter((c) => !have.includes(c));
    const extra = have.filter((c) => !t.columns.includes(c));
    if (missing.length > 0) problems.push(`${t.name} lacks ${missing.join(", ")}`);
    if (extra.length > 0) problems.push(`${t.name} has columns this build does not know: ${extra.join(", ")}`);
  }
  if (problems.length === 0) return;
  throw new CopySourceMismatch(
    `The SQLite store ${path} does not match this Switchyard's tables (${problems.join("; ")}). Start this version of Switchyard ` +
      `on it once (it migrates the store), stop it, then copy; a store written by a newer Switchyard needs that newer version.`,
    { problems },
  );
}

async function refuseRows(tx: TransactionSql, tables: TablePlan[], url: string): Promise<void> {
  const probes = tables.map((t) => `SELECT '${t.name}' AS name, count(*)::int AS n FROM ${quote(t.name)}`).join(" UNION ALL ");
  const rows = await tx.unsafe<Array<{ name: string; n: number }>>(probes);
  const full = Object.fromEntries(rows.filter((r) => r.n > 0).map((r) => [r.name, r.n]));
  if (Object.keys(full).length === 0) return;
  const list = Object.entries(full)
    .map(([name, n]) => `${name}: ${n}`)
    .join(", ");
  throw new CopyTargetNotEmpty(
    `The PostgreSQL database at ${redactDatabaseUrl(url)} (${DATABASE_URL_VAR}) is not empty (${list}). Copy into a new, empty ` +
      `database (CREATE DATABASE ...); nothing was written.`,
    { rows: full },
  );
}

async function copyTable(sqlite: Database.Database, tx: TransactionSql, table: TablePlan, batchRows: number): Promise<number> {
  const cols = table.columns;
  const perBatch = Math.max(1, Math.min(batchRows, Math.floor(MAX_PARAMS / cols.length)));
  const select = sqlite.prepare(`SELECT ${cols.map(quote).join(", ")} FROM ${quote(table.name)}`).raw(true).safeIntegers(true);
  const head = `INSERT INTO ${quote(table.name)} (${cols.map(quote).join(", ")}) VALUES `;
  let params: unknown[] = [];
  let rows = 0;
  let bytes = 0;
  let copied = 0;
  const flush = async () => {
    if (rows === 0) return;
    const tuples = Array.from({ length: rows }, (_, r) => `(${cols.map((_, c) => `$${r * cols.length + c + 1}`).join(", ")})`);
    await tx.unsafe(head + tuples.join(", "), params as never[], { prepare: rows === perBatch });
    copied += rows;
    params = [];
    rows = 0;
    bytes = 0;
  };
  for (const raw of select.iterate() as IterableIterator<unknown[]>) {
    for (let c = 0; c < cols.length; c++) {
      const value = convert(table, cols[c]!, raw[c], raw);
      if (typeof value === "string") bytes += value.length;
      params.push(value);
    }
    rows++;
    if (rows >= perBatch || bytes >= MAX_BATCH_BYTES) await flush();
  }
  await flush();
  if (table.identity) {
    // the next id handed out follows the largest copied one
    const col = quote(table.identity);
    await tx.unsafe(`SELECT setval(pg_get_serial_sequence('${table.name}', '${table.identity}'), COALESCE(MAX(${col}), 0) + 1, false) FROM ${quote(table.name)}`);
  }
  return copied;
}

/**
 * One SQLite value as PostgreSQL takes it. Integers are read as BigInt (nothing rounded): numbers
 * when they fit a double exactly, else their decimal text; 0/1 in a boolean column a boolean.
 * Text PostgreSQL cannot hold (a NUL character) is refused, naming the table, row and column.
 */
function convert(table: TablePlan, column: string, value: unknown, row: unknown[]): unknown {
  if (value === null) return null;
  const where = () => `${table.name}.${column} of row ${String(row[0])}`;
  if (table.booleans.has(column)) {
    if (value === 0n || value === 1n) return value === 1n;
    throw new Error(`${where()} holds ${String(value)}, not a 0/1 boolean`);
  }
  if (typeof value === "bigint") return value >= MIN_SAFE && value <= MAX_SAFE ? Number(value) : value.toString();
  if (typeof value === "string" && value.includes("\u0000")) throw new Error(`${where()} holds a NUL character, which PostgreSQL text cannot store`);
  if (Buffer.isBuffer(value)) throw new Error(`${where()} holds a blob, which no column of this schema takes`);
  return value;
}

const MIN_SAFE = BigInt(Number.MIN_SAFE_INTEGER);
const MAX_SAFE = BigInt(Number.MAX_SAFE_INTEGER);
