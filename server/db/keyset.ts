import { and, desc, lt, lte, or, type AnyColumn, type SQL } from "drizzle-orm";
import { DomainError } from "../errors";

/**
 * Keyset paging, newest first: rows are ordered by (a number key, e.g. a creation time, desc; the
 * id desc, which breaks ties), and a page starts strictly after the last row of the page before.
 * Unlike OFFSET, rows inserted meanwhile (newer ones, at the top) neither repeat nor hide a row of
 * the next page, and the database reads one range of an index instead of skipping N rows.
 */

/** Where a page ends: the sort key and id of its last row. */
export type Cursor = { at: number; id: string };

export function encodeCursor(c: Cursor): string {
  return Buffer.from(JSON.stringify([c.at, c.id])).toString("base64url");
}

/** The cursor in `text`; a precise BAD_INPUT when it is not one of ours. */
export function decodeCursor(text: string): Cursor {
  try {
    const value: unknown = JSON.parse(Buffer.from(text, "base64url").toString("utf8"));
    if (Array.isArray(value) && value.length === 2 && Number.isSafeInteger(value[0]) && typeof value[1] === "string" && value[1].length > 0) return { at: value[0] as number, id: value[1] };
  } catch {
    // not JSON: refused below
  }
  throw new DomainError("BAD_INPUT", "cursor: expected the nextCursor of a page of this list, as it came", { kind: "BAD_REQUEST" });
}

/** The rows after `cursor` in the order (key desc, id desc); written so an index on `key` serves the range. */
export function after(key: AnyColumn, id: AnyColumn, cursor: Cursor): SQL {
  return and(lte(key, cursor.at), or(lt(key, cursor.at), lt(id, cursor.id)))!;
}

/** The order of every keyset list: newest first, the id breaking ties. */
export function newestFirst(key: AnyColumn, id: AnyColumn): SQL[] {
  return [desc(key), desc(id)];
}

/**
 * The rows of a page read with `limit + 1` (the extra row only tells that more follow), and the
 * cursor of the next page (null: the last one). Without a limit: every row, no next cursor.
 */
export function pageRows<R>(rows: R[], limit: number | undefined, cursorOf: (row: R) => Cursor): { rows: R[]; nextCursor: string | null } {
  const more = limit !== undefined && rows.length > limit;
  const shown = more ? rows.slice(0, limit) : rows;
  return { rows: shown, nextCursor: more ? encodeCursor(cursorOf(shown[shown.length - 1]!)) : null };
}
