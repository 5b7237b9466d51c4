import { and, count, eq, inArray, sql, type SQL } from "drizzle-orm";
import type { RunStatus } from "../../shared/statuses";
import { after, decodeCursor, newestFirst, pageRows } from "../db/keyset";
import type { Store } from "../db/store";
import type { RunRow } from "./run-lifecycle";

/** What a runs listing keeps: one directory, some statuses, a text found in the strategy's name or path or the directory. */
export type RunFilter = { cwd?: string; status?: readonly RunStatus[]; q?: string };

/**
 * The read side of the `runs` table for listings, on either store: pages newest first (keyset on
 * started_at, id; see server/db/keyset.ts) and the counts per status, both under one filter.
 */
export class RunListing {
  constructor(private readonly store: Store) {}

  /** One page of rows: `limit` at most (omitted: all), after `cursor`. */
  async page(filter: RunFilter, limit?: number, cursor?: string | null): Promise<{ rows: RunRow[]; nextCursor: string | null }> {
    const { runs } = this.store.t;
    const where = this.where(filter, cursor ? after(runs.startedAt, runs.id, decodeCursor(cursor)) : undefined);
    const q = this.store.read.select().from(runs).where(where).orderBy(...newestFirst(runs.startedAt, runs.id));
    const rows = limit === undefined ? await q : await q.limit(limit + 1);
    return pageRows(rows, limit, (r) => ({ at: r.startedAt, id: r.id }));
  }

  /** How many runs the filter keeps (its status ignored), in all and per status: one grouped count. */
  async counts(filter: Omit<RunFilter, "status">): Promise<{ total: number; byStatus: Partial<Record<RunStatus, number>> }> {
    const { runs } = this.store.t;
    const rows = await this.store.read.select({ status: runs.status, n: count() }).from(runs).where(this.where(filter)).groupBy(runs.status);
    const byStatus: Partial<Record<RunStatus, number>> = {};
    for (const r of rows) byStatus[r.status] = Number(r.n);
    return { total: rows.reduce((sum, r) => sum + Number(r.n), 0), byStatus };
  }

  private where(filter: RunFilter, more?: SQL): SQL | undefined {
    const { runs } = this.store.t;
    const text = filter.q?.trim().toLowerCase();
    return and(
      filter.cwd ? eq(runs.cwd, filter.cwd) : undefined,
      filter.status ? inArray(runs.status, [...filter.status]) : undefined,
      text ? sql`lower(${runs.strategyName} || ' ' || ${runs.strategyPath} || ' ' || ${runs.cwd}) LIKE ${`%${likeEscaped(text)}%`} ESCAPE '\\'` : undefined,
      more,
    );
  }
}

/** `text` matched literally by LIKE (its %, _ and \ escaped with \). */
export function likeEscaped(text: string): string {
  return text.replace(/[\\%_]/g, (c) => `\\${c}`);
}
