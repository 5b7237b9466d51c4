import { eq } from "drizzle-orm";
import { afterAll, describe, expect, it } from "vitest";
import type { AgentStatus } from "../../shared/statuses";
import type { Store } from "../db/store";
import { STORE_KINDS, testStores } from "../testing/stores";
import { AgentApprovals } from "./agent-approvals";
import { AgentListing, type AgentFilter } from "./agent-listing";
import { AgentMessages } from "./agent-messages";
import { AgentRecords } from "./agent-records";
import { AgentViews } from "./agent-views";
import { EventBus } from "../events/bus";

/**
 * The agents listing on both stores: keyset pages newest first (created_at, then id), stable
 * while agents are spawned between two pages, under the filters (statuses or needing you, labels,
 * a family), the counts, and the views' page of AgentInfo (approvals of the page's agents).
 */
const stores = testStores();
afterAll(() => stores.close());

type Seed = { id: string; createdAt: number; status?: AgentStatus; taskId?: string; approval?: boolean };

async function insert(store: Store, seeds: Seed[]): Promise<void> {
  const records = new AgentRecords(store);
  const { agents, agentApprovals } = store.t;
  for (const a of seeds) {
    await records.insert({ id: a.id, alias: `alias-${a.id}`, provider: "fake", mode: "execute", permissionMode: "ask", prompt: "p", task: "t", workspacePath: "/w", workspaceKind: "worktree", configDir: "/c", taskId: a.taskId ?? null, createdAt: a.createdAt, updatedAt: a.createdAt });
    await store.tx(async (tx) => {
      if (a.status) await tx.update(agents).set({ status: a.status }).where(eq(agents.id, a.id));
      if (a.approval) await tx.insert(agentApprovals).values({ id: `ap_${a.id}`, agentId: a.id, toolName: "Bash", input: "{}", status: "pending", createdAt: a.createdAt });
    });
  }
}

async function allIds(listing: AgentListing, filter: AgentFilter, limit: number): Promise<{ ids: string[]; pages: number }> {
  const ids: string[] = [];
  let pages = 0;
  let cursor: string | null = null;
  do {
    const page = await listing.page(filter, limit, cursor);
    ids.push(...page.rows.map((r) => r.id));
    cursor = page.nextCursor;
    pages++;
  } while (cursor && pages < 100);
  return { ids, pages };
}

const STATUSES: AgentStatus[] = ["running", "idle", "waiting_for_input", "stopped"];
/** 17 agents, pairs created in the same millisecond; some with an approval pending. */
const seeds = (): Seed[] =>
  Array.from({ length: 17 }, (_, i) => ({ id: `agent_${String(i).padStart(3, "0")}`, createdAt: 5_000 + Math.floor(i / 2) * 10, status: STATUSES[i % 4], taskId: i % 3 === 0 ? "task-a" : "task-b", approval: i % 5 === 1 }));
const newestFirst = (rows: Seed[]) => [...rows].sort((a, b) => b.createdAt - a.createdAt || (a.id < b.id ? 1 : -1)).map((r) => r.id);

describe.each(STORE_KINDS)("the agents listing on %s", (kind) => {
  it("pages newest first (ties by id), each agent once while others are spawned between pages, the last page with a null cursor", async () => {
    const store = await stores.fresh(kind);
    const rows = seeds();
    await insert(store, rows);
    const listing = new AgentListing(store);
    const whole = await allIds(listing, {}, 4);
    expect(whole).toEqual({ ids: newestFirst(rows), pages: 5 });
    expect((await listing.page({}, 17)).nextCursor).toBeNull();

    const first = await listing.page({}, 6);
    await insert(store, [{ id: "agent_900", createdAt: 99_000 }]);
    const seen = first.rows.map((r) => r.id);
    for (let cursor = first.nextCursor; cursor; ) {
      const page = await listing.page({}, 6, cursor);
      seen.push(...page.rows.map((r) => r.id));
      cursor = page.nextCursor;
      await insert(store, [{ id: `agent_9${seen.length}`, createdAt: 99_000 + seen.length }]);
    }
    expect(seen).toEqual(newestFirst(rows));
  });

  it("keeps the filters on every page: statuses or needing you, labels, a family; counts per status and needing you", async () => {
    const store = await stores.fresh(kind);
    const rows = seeds();
    await insert(store, rows);
    const listing = new AgentListing(store);
    const needs = (r: Seed) => r.status === "waiting_for_input" || !!r.approval;
    const check = async (filter: AgentFilter, keep: (r: Seed) => boolean) => {
      const expected = newestFirst(rows.filter(keep));
      expect(expected.length).toBeGreaterThan(0);
      expect((await allIds(listing, filter, 3)).ids).toEqual(expected);
    };
    await check({ status: ["running", "idle"] }, (r) => r.status === "running" || r.status === "idle");
    await check({ needsYou: true }, needs);
    await check({ needsYou: true, status: ["stopped"] }, (r) => needs(r) || r.status === "stopped");
    await check({ taskId: "task-a", status: ["running"] }, (r) => r.taskId === "task-a" && r.status === "running");
    await check({ ids: ["agent_003", "agent_010", "agent_nobody"] }, (r) => r.id === "agent_003" || r.id === "agent_010");
    expect((await listing.page({ ids: [] })).rows).toEqual([]);
    expect(await listing.counts({})).toEqual({ total: 17, byStatus: { running: 5, idle: 4, waiting_for_input: 4, stopped: 4 }, needsYou: rows.filter(needs).length });
    expect(await listing.counts({ taskId: "task-a" })).toMatchObject({ total: rows.filter((r) => r.taskId === "task-a").length });
  });

  it("a page of AgentInfo carries its agents' pending approvals", async () => {
    const store = await stores.fresh(kind);
    const rows = seeds();
    await insert(store, rows);
    const bus = await new EventBus(store.events).open();
    const views = new AgentViews(store, new AgentRecords(store), new AgentApprovals(store, bus), new AgentMessages(store), undefined);
    const first = await views.list({}, { limit: 5 });
    const second = await views.list({}, { limit: 5, cursor: first.nextCursor });
    const page = [...first.items, ...second.items];
    expect(page.map((a) => a.id)).toEqual(newestFirst(rows).slice(0, 10));
    for (const a of page) expect({ id: a.id, pendingApprovals: a.pendingApprovals }).toEqual({ id: a.id, pendingApprovals: rows.find((r) => r.id === a.id)!.approval ? 1 : 0 });
    await expect(views.list({}, { limit: 5, cursor: "garbage" })).rejects.toMatchObject({ code: "BAD_INPUT" });
  });
});
