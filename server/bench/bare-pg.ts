import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import postgres, { type Sql } from "postgres";
import { REPO_ROOT } from "../paths";

/**
 * The PostgreSQL event limit's database (bare-pg-writer.ts, bare-pg-reader.ts): plain postgres.js
 * on a database of its own, with the same tables and indexes as Switchyard's (the pg migrations'
 * SQL, run as it is, by the writer).
 */
export const BARE_CHANNEL = "switchyard_events";

export function bareSql(url: string): Sql {
  return postgres(url, { max: 1, onnotice: () => {} });
}

export async function createBareSchema(sql: Sql): Promise<void> {
  const dir = join(REPO_ROOT, "drizzle-pg");
  for (const file of readdirSync(dir).filter((f) => f.endsWith(".sql")).sort()) {
    for (const statement of readFileSync(join(dir, file), "utf8").split("--> statement-breakpoint")) {
      if (statement.trim()) await sql.unsafe(statement);
    }
  }
}

export async function maxEventId(sql: Sql): Promise<number> {
  const [row] = await sql<Array<{ id: string | null }>>`SELECT max(id)::text AS id FROM events`;
  return Number(row?.id ?? 0);
}
