import { afterAll, describe, expect, it } from "vitest";
import type { RunStatus } from "../../shared/statuses";
import type { Store } from "../db/store";
import { STORE_KINDS, testStores } from "../testing/stores";
import { RunListing, type RunFilter } from "./run-listing";

/**
 * The runs listing on both stores: keyset pages newest first (started_at, then id), stable while
 * runs are added between two pages, under the filters, and the counts per status.
 */
const stores = testStores();
afterAll(() => stores.close());

type Seed = { id: string; startedAt: number; status?: RunStatus; cwd?: string; name?: string; path?: string };

async function insert(store: Store, rows: Seed[]): Promise<void> {
  const { runs } = store.t;
  await store.tx(async (tx) => {
    for (const r of rows) {
      await tx.insert(runs).values({ id: r.id, cwd: r.cwd ?? "/work/a", strategyName: r.name ?? "Hello", strategyPath: r.path ?? "/s/hello.yaml", status: r.status ?? "completed", segment: 1, startedAt: r.startedAt });
    }
  });
}

/** Every page of the filter, `limit` a page: the ids of each page, and the cursor each one ended with. */
async function allPages(listing: RunListing, filter: RunFilter, limit: number): Promise<{ pages: string[][]; cursors: Array<string | null> }> {
  const pages: string[][] = [];
  const cursors: Array<string | null> = [];
  let cursor: string | null = null;
  do {
    const page = await listing.page(filter, limit, cursor);
    pages.push(page.rows.map((r) => r.id));
    cursors.push(page.nextCursor);
    cursor = page.nextCursor;
  } while (cursor && pages.length < 100);
  return { pages, cursors };
}

/** 23 runs; every third shares its start time with the one before (ties broken by id). */
const seeds = (): Seed[] => Array.from({ length: 23 }, (_, i) => ({ id: `run_${String(i).padStart(3, "0")}`, startedAt: 1_000_000 + Math.floor(i / 3) * 2 * 1000 + (i % 3 === 2 ? 0 : (i % 3) * 1000) }));
const newestFirst = (rows: Seed[]) => [...rows].sort((a, b) => b.startedAt - a.startedAt || (a.id < b.id ? 1 : -1)).map((r) => r.id);

describe.each(STORE_KINDS)("the runs listing on %s", (kind) => {
  it("pages newest first (ties by id), each row once, the last page with a null cursor; no limit: every row", async () => {
    const store = await stores.fresh(kind);
    const rows = seeds();
    await insert(store, rows);
    const listing = new RunListing(store);
    const { pages, cursors } = await allPages(listing, {}, 5);
    expect(pages.map((p) => p.length)).toEqual([5, 5, 5, 5, 3]);
    expect(pages.flat()).toEqual(newestFirst(rows));
    expect(cursors.slice(0, -1).every((c) => typeof c === "string")).toBe(true);
    expect(cursors.at(-1)).toBeNull();
    // an exact multiple: the last full page already says there is no more
    const exact = await allPages(listing, {}, 23);
    expect(exact.pages).toHaveLength(1);
    expect(exact.cursors).toEqual([null]);
    const every = await listing.page({});
    expect(every.rows.map((r) => r.id)).toEqual(newestFirst(rows));
    expect(every.nextCursor).toBeNull();
  });

  it("runs added between two pages neither repeat a row nor hide one", async () => {
    const store = await stores.fresh(kind);
    const rows = seeds();
    await insert(store, rows);
    const listing = new RunListing(store);
    const first = await listing.page({}, 7);
    const last = first.rows.at(-1)!;
    // newer runs (they go on top), and two with the start time of the page's last row: one sorting before it, one after
    const added: Seed[] = [
      { id: "run_900", startedAt: 9_000_000 },
      { id: "run_901", startedAt: 9_000_001 },
      { id: `${last.id}_z`, startedAt: last.startedAt },
      { id: `${last.id.slice(0, -1)}`, startedAt: last.startedAt },
    ];
    await insert(store, added);
    const seen = first.rows.map((r) => r.id);
    let cursor = first.nextCursor;
    while (cursor) {
      const page = await listing.page({}, 7, cursor);
      seen.push(...page.rows.map((r) => r.id));
      cursor = page.nextCursor;
      if (cursor) await insert(store, [{ id: `run_9${seen.length}`, startedAt: 9_500_000 + seen.length }]);
    }
    expect(new Set(seen).size).toBe(seen.length);
    expect(seen.filter((id) => rows.some((r) => r.id === id))).toEqual(newestFirst(rows));
    // of the rows added meanwhile, exactly those that sort after the first page's last row show up
    expect(seen.filter((id) => added.some((a) => a.id === id))).toEqual([`${last.id.slice(0, -1)}`]);
  });

  it("keeps the filters on every page (status, directory, text with % and _ taken literally) and counts per status", async () => {
    const store = await stores.fresh(kind);
    const rows: Seed[] = Array.from({ length: 30 }, (_, i) => ({
      id: `run_${String(i).padStart(3, "0")}`,
      startedAt: 2_000_000 + i * 1000,
      status: (["completed", "running", "error"] as const)[i % 3],
      cwd: i % 2 === 0 ? "/work/even" : "/work/odd",
      name: i % 5 === 0 ? "Fix 100%_Done" : "Review",
      path: `/s/${i % 5 === 0 ? "fix" : "review"}.yaml`,
    }));
    await insert(store, rows);
    const listing = new RunListing(store);
    const expectPaged = async (filter: RunFilter, keep: (r: Seed) => boolean) => {
      const { pages } = await allPages(listing, filter, 4);
      expect(pages.flat()).toEqual(newestFirst(rows.filter(keep)));
      expect(pages.flat().length).toBeGreaterThan(0);
    };
    await expectPaged({ status: ["running", "error"] }, (r) => r.status === "running" || r.status === "error");
    await expectPaged({ cwd: "/work/even", status: ["completed"] }, (r) => r.cwd === "/work/even" && r.status === "completed");
    await expectPaged({ q: "100%_d" }, (r) => r.name === "Fix 100%_Done");
    await expectPaged({ q: "WORK/ODD" }, (r) => r.cwd === "/work/odd");
    expect((await listing.page({ q: "100%x" })).rows).toEqual([]);
    expect((await listing.page({ q: "_" })).rows.map((r) => r.id)).toEqual(newestFirst(rows.filter((r) => r.name?.includes("_"))));
    expect(await listing.counts({})).toEqual({ total: 30, byStatus: { completed: 10, running: 10, error: 10 } });
    expect(await listing.counts({ cwd: "/work/even", q: "fix" })).toEqual({ total: 3, byStatus: { completed: 1, running: 1, error: 1 } });
  });

  it("refuses a cursor that is not one of its pages' with BAD_INPUT", async () => {
    const listing = new RunListing(await stores.fresh(kind));
    for (const bad of ["nope", Buffer.from("[1]").toString("base64url"), Buffer.from('["x","y"]').toString("base64url")]) {
      await expect(listing.page({}, 5, bad)).rejects.toMatchObject({ code: "BAD_INPUT", message: expect.stringMatching(/^cursor:/) });
    }
  });
});
