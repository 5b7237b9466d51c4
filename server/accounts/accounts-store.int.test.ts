import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import type { Store } from "../db/store";
import { EventBus } from "../events/bus";
import { createLogger } from "../log";
import { STORE_KINDS, testStores, type StoreKind } from "../testing/stores";
import { AccountsService } from "./accounts.service";

/**
 * The accounts' store-facing behaviour on SQLite and on PostgreSQL: sealed rows, selection,
 * exhaustion and its timer (a compare-and-set, so two servers free an account once), the unique
 * label when two add at once, removal once, and what a new store on the same database sees.
 */

const stores = testStores();
afterAll(() => stores.close());

type Server = { store: Store; bus: EventBus; accounts: AccountsService; secrets: string[]; freed: string[] };

describe.each(STORE_KINDS)("accounts on %s", (kind: StoreKind) => {
  let home: string;
  let servers: Server[];

  beforeEach(() => {
    home = mkdtempSync(join(tmpdir(), "switchyard-accounts-store-"));
    servers = [];
  });
  afterEach(async () => {
    for (const s of servers.splice(0)) {
      await s.accounts.close();
      s.bus.close();
      await s.bus.drain();
    }
    rmSync(home, { recursive: true, force: true });
  });

  /** A server on `store`: its own bus and accounts service, sharing the data dir (the account key). */
  function serve(store: Store, cooldownMs = 60_000): Server {
    const bus = new EventBus(store.events);
    const secrets: string[] = [];
    const freed: string[] = [];
    const accounts = new AccountsService({
      store,
      bus,
      log: createLogger({ level: "silent", redact: (s) => s }),
      home,
      cooldownMs,
      claudeOAuth: { tokenUrl: "http://127.0.0.1:9/unused", clientId: "client-test" },
      addSecret: (s) => secrets.push(s),
      activeAgentsOf: async () => 0,
    });
    accounts.onAvailable((p) => freed.push(p));
    const server = { store, bus, accounts, secrets, freed };
    servers.push(server);
    return server;
  }

  /** Another server on the same database (PostgreSQL: its own pool; SQLite: one connection per file, shared). */
  const other = async (store: Store) => (kind === "postgres" ? stores.again(store) : store);

  const eventsOf = async (store: Store, type: string) => (await store.events.readAfter(0, undefined, 10_000)).filter((e) => e.type === type);

  it("stores credentials sealed, picks the least recently used usable account, and skips an exhausted one until its reset", async () => {
    const store = await stores.fresh(kind);
    const { accounts } = serve(store);
    const a = await accounts.add({ provider: "claude", label: "a", secret: "key-aaaa-1111" });
    const b = await accounts.add({ provider: "claude", label: "b", secret: "key-bbbb-2222" });
    await accounts.add({ provider: "codex", label: "c", secret: "key-cccc-3333" });

    const raw = await store.read.select().from(store.t.accounts);
    expect(raw).toHaveLength(3);
    for (const r of raw) expect(r.secret).toMatch(/^v1\./);
    expect(JSON.stringify(raw)).not.toContain("key-aaaa-1111");

    expect((await accounts.list()).map((x) => x.label)).toEqual(["a", "b", "c"]);
    expect((await accounts.list({ provider: "codex" })).map((x) => x.label)).toEqual(["c"]);
    expect(await accounts.has("claude")).toBe(true);
    expect(await accounts.has("fake")).toBe(false);
    expect(await accounts.label(b.id)).toBe("b");
    expect(await accounts.label("acct_nope")).toBeNull();
    expect(await accounts.labels()).toEqual(new Map(raw.map((r) => [r.id, r.label])));

    const first = await accounts.acquire("claude");
    const second = await accounts.acquire("claude");
    expect([first?.id, second?.id]).toEqual([a.id, b.id]);
    expect(first?.env).toEqual({ ANTHROPIC_API_KEY: "key-aaaa-1111" });
    expect((await accounts.acquire("claude", { prefer: "b" }))?.id).toBe(b.id);
    expect((await accounts.get(b.id)).lastUsedAt).not.toBeNull();

    const until = Date.now() + 60_000;
    expect(await accounts.markExhausted(b.id, until, "limit")).toEqual({ until });
    expect(await accounts.markExhausted("acct_nope", null, "limit")).toBeNull();
    expect(await accounts.get("b")).toMatchObject({ status: "exhausted", statusReason: "limit", exhaustedUntil: new Date(until).toISOString() });
    expect((await accounts.acquire("claude", { prefer: "b" }))?.id).toBe(a.id);
    expect(await accounts.usableCount("claude")).toBe(1);
    expect(await accounts.usableCount("claude", a.id)).toBe(0);
    expect(await accounts.nextFreeAt("claude")).toBe(until);
    await accounts.markExhausted(a.id, null, "limit");
    expect(await accounts.acquire("claude")).toBeNull();
    expect(await accounts.nextFreeAt("claude")).toBe(until);

    await accounts.reset("b");
    expect(await accounts.get("b")).toMatchObject({ status: "available", exhaustedUntil: null });
    expect((await eventsOf(store, "account.added")).map((e) => (e.payload as { label: string }).label)).toEqual(["a", "b", "c"]);
    expect(await eventsOf(store, "account.exhausted")).toHaveLength(2);
    expect(await eventsOf(store, "account.became_available")).toHaveLength(1);
  });

  it("an unusable credential marks the account invalid (with its event); reset makes it selectable again", async () => {
    const store = await stores.fresh(kind);
    const { accounts } = serve(store);
    await accounts.add({ provider: "claude", kind: "oauth", label: "old", secret: "access-expired-1", expiresAt: Date.now() - 1000 });
    await accounts.add({ provider: "claude", label: "spare", secret: "key-spare-0000" });
    expect((await accounts.acquire("claude", { prefer: "old" }))?.label).toBe("spare");
    const old = await accounts.get("old");
    expect(old.status).toBe("invalid");
    expect(old.statusReason).toMatch(/expired at .* and there is no refresh token/);
    expect(await eventsOf(store, "account.invalidated")).toHaveLength(1);
    await accounts.reset("old");
    expect((await accounts.get("old")).status).toBe("available");
  });

  it("keeps the tokens a CLI rotated, sealed, with their expiry (epoch ms)", async () => {
    const store = await stores.fresh(kind);
    const { accounts } = serve(store);
    const expiresAt = Date.now() + 3_600_000;
    await accounts.add({ provider: "claude", kind: "oauth", label: "r", secret: "access-first-01", refreshToken: "refresh-first-01", expiresAt });
    const got = await accounts.acquire("claude");
    const rotatedAt = expiresAt + 3_600_000;
    writeFileSync(join(got!.configDir, ".credentials.json"), JSON.stringify({ claudeAiOauth: { accessToken: "access-rotated-02", refreshToken: "refresh-rotated-02", expiresAt: rotatedAt } }));
    await accounts.acquire("claude");
    expect(await accounts.get("r")).toMatchObject({ secretHint: "…d-02", expiresAt: new Date(rotatedAt).toISOString() });
    const [row] = await store.read.select().from(store.t.accounts);
    expect(row!.expiresAt).toBe(rotatedAt);
    expect(row!.secret).not.toContain("access-rotated-02");
  });

  it("two adds of one label at once, on one server and on two: one is stored, the others are refused", async () => {
    const store = await stores.fresh(kind);
    const a = serve(store);
    const b = serve(await other(store));
    const tries = [a, a, b, b].map((s, i) => s.accounts.add({ provider: "claude", label: "same", secret: `key-same-000${i}` }));
    const settled = await Promise.allSettled(tries);
    expect(settled.filter((r) => r.status === "fulfilled")).toHaveLength(1);
    for (const r of settled.filter((x) => x.status === "rejected")) expect(String((r as PromiseRejectedResult).reason)).toMatch(/labelled "same" exists/);
    expect(await store.read.select().from(store.t.accounts)).toHaveLength(1);
    expect(await eventsOf(store, "account.added")).toHaveLength(1);
    const won = settled.findIndex((r) => r.status === "fulfilled");
    await expect(b.accounts.add({ provider: "claude", label: "other", secret: `key-same-000${won}` })).rejects.toThrow(/already registered/);
  });

  it("an exhaustion that passes frees the account once, though two servers' timers race for it (one account.became_available)", async () => {
    const store = await stores.fresh(kind);
    const a = serve(store);
    const acct = await a.accounts.add({ provider: "claude", label: "a", secret: "key-aaaa-1111" });
    // long enough that b reads it exhausted on a busy machine before the timers free it
    await a.accounts.markExhausted(acct.id, Date.now() + 2_000, "limit");
    const b = serve(await other(store));
    a.freed.length = 0; // the add was announced to a's listeners
    await vi.waitFor(async () => expect((await b.accounts.get("a")).status).toBe("exhausted"));
    await vi.waitFor(async () => expect((await a.accounts.get("a")).status).toBe("available"), { timeout: 5000, interval: 50 });
    // the winner's listeners hear it (the other's too when its pass read the row before it was freed)
    await vi.waitFor(() => expect([...a.freed, ...b.freed]).toContain("claude"), { timeout: 5000, interval: 50 });
    await new Promise((r) => setTimeout(r, 300));
    expect(await eventsOf(store, "account.became_available")).toHaveLength(1);
    const [row] = await store.read.select().from(store.t.accounts);
    expect(row).toMatchObject({ exhaustedUntil: null, exhaustedReason: null });
  });

  it("an account exhausted again before the timer's pass stays exhausted (the pass compares before it frees)", async () => {
    const store = await stores.fresh(kind);
    const a = serve(store);
    const acct = await a.accounts.add({ provider: "claude", label: "a", secret: "key-aaaa-1111" });
    await a.accounts.markExhausted(acct.id, Date.now() + 300, "first limit");
    const later = Date.now() + 60_000;
    // another server extends it (as a second limit would), straight in the database, before the first timer fires
    await store.tx(async (tx) => {
      await tx.update(store.t.accounts).set({ exhaustedUntil: later, exhaustedReason: "second limit" });
    });
    await new Promise((r) => setTimeout(r, 700));
    expect(await a.accounts.get("a")).toMatchObject({ status: "exhausted", statusReason: "second limit", exhaustedUntil: new Date(later).toISOString() });
    expect(await eventsOf(store, "account.became_available")).toHaveLength(0);
  });

  it("removes an account once: two removes at once (one per server), one is refused", async () => {
    const store = await stores.fresh(kind);
    const a = serve(store);
    const b = serve(await other(store));
    await a.accounts.add({ provider: "claude", label: "gone", secret: "key-gone-0001" });
    const settled = await Promise.allSettled([a.accounts.remove("gone"), b.accounts.remove("gone")]);
    expect(settled.map((r) => r.status).sort()).toEqual(["fulfilled", "rejected"]);
    expect(String((settled.find((r) => r.status === "rejected") as PromiseRejectedResult).reason)).toMatch(/No account "gone"/);
    expect(await a.accounts.list()).toEqual([]);
    expect(await eventsOf(store, "account.removed")).toHaveLength(1);
  });

  it("after a restart (a new store on the same database): the accounts are there, their secrets are redaction targets again, and a limit that passed meanwhile ends", async () => {
    const store = await stores.fresh(kind);
    const a = serve(store);
    const acct = await a.accounts.add({ provider: "claude", label: "a", secret: "key-aaaa-1111", email: "me@example.com" });
    await a.accounts.add({ provider: "claude", kind: "oauth", label: "o", secret: "access-oauth-01", refreshToken: "refresh-oauth-01", expiresAt: Date.now() + 3_600_000 });
    await a.accounts.markExhausted(acct.id, Date.now() + 150, "limit");
    await a.accounts.close();
    await new Promise((r) => setTimeout(r, 300));

    const b = serve(await stores.again(store));
    await vi.waitFor(() => expect(b.secrets).toEqual(expect.arrayContaining(["key-aaaa-1111", "access-oauth-01", "refresh-oauth-01"])));
    await vi.waitFor(async () => expect(await eventsOf(b.store, "account.became_available")).toHaveLength(1));
    // its listeners hear it once the pass that freed it returns (after the event's commit)
    await vi.waitFor(() => expect(b.freed).toEqual(["claude"]));
    expect(await b.accounts.get("a")).toMatchObject({ status: "available", email: "me@example.com" });
    expect((await b.accounts.list()).map((x) => x.label)).toEqual(["a", "o"]);
    expect((await b.accounts.acquire("claude", { prefer: "a" }))?.env).toEqual({ ANTHROPIC_API_KEY: "key-aaaa-1111" });
  });
});
