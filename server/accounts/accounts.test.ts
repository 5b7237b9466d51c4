import { createServer, type IncomingMessage } from "node:http";
import type { AddressInfo } from "node:net";
import { existsSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { openSqliteStore, type SqliteStore } from "../db/sqlite-store";
import { EventBus } from "../events/bus";
import { createLogger } from "../log";
import { AccountsService } from "./accounts.service";
import { Sealer } from "./sealing";

const migrationsDir = resolve(import.meta.dirname, "..", "..", "drizzle");

let home: string;
let store: SqliteStore;
let bus: EventBus;
let secrets: string[];
let service: AccountsService;

function newService(overrides: { tokenUrl?: string; cooldownMs?: number } = {}): AccountsService {
  return new AccountsService({
    store,
    bus,
    log: createLogger({ level: "silent", redact: (s) => s }),
    home,
    cooldownMs: overrides.cooldownMs ?? 60_000,
    claudeOAuth: { tokenUrl: overrides.tokenUrl ?? "http://127.0.0.1:9/unused", clientId: "client-test" },
    addSecret: (s) => secrets.push(s),
    activeAgentsOf: () => 0,
  });
}

beforeEach(() => {
  home = mkdtempSync(join(tmpdir(), "switchyard-accounts-"));
  store = openSqliteStore({ path: ":memory:", migrationsDir });
  bus = new EventBus(store.events);
  secrets = [];
  service = newService();
});
afterEach(async () => {
  await service.close();
  bus.close();
  await store.close();
  rmSync(home, { recursive: true, force: true });
});

describe("accounts", () => {
  it("picks the least recently used usable account, and the preferred one while it is usable", async () => {
    const a = await service.add({ provider: "claude", label: "a", secret: "key-aaaa-1111" });
    const b = await service.add({ provider: "claude", label: "b", secret: "key-bbbb-2222" });
    await service.add({ provider: "codex", label: "c", secret: "key-cccc-3333" });
    const first = await service.acquire("claude");
    const second = await service.acquire("claude");
    expect([first?.id, second?.id]).toEqual([a.id, b.id]);
    expect((await service.acquire("claude", { prefer: "b" }))?.id).toBe(b.id);
    await service.markExhausted(b.id, Date.now() + 60_000, "limit");
    expect((await service.acquire("claude", { prefer: "b" }))?.id).toBe(a.id);
    await service.markExhausted(a.id, null, "limit");
    expect(await service.acquire("claude")).toBeNull();
    expect(await service.usableCount("claude")).toBe(0);
    expect(await service.nextFreeAt("claude")).toBeGreaterThan(Date.now());
    expect(secrets).toEqual(expect.arrayContaining(["key-aaaa-1111", "key-bbbb-2222"]));
  });

  it("an api-key account puts its key in the env and keeps other Claude credentials out", async () => {
    await service.add({ provider: "claude", label: "k", secret: "sk-ant-abcdef-9999" });
    const got = await service.acquire("claude");
    expect(got?.env).toEqual({ ANTHROPIC_API_KEY: "sk-ant-abcdef-9999" });
    expect(got?.unset).toEqual(expect.arrayContaining(["CLAUDE_CODE_OAUTH_TOKEN", "ANTHROPIC_AUTH_TOKEN"]));
    expect(await service.get("k")).toMatchObject({ secretHint: "…9999", status: "available", kind: "api-key" });
  });

  it("a setup token is written as .credentials.json {claudeAiOauth:{accessToken}} with onboarding complete", async () => {
    await service.add({ provider: "claude", kind: "setup-token", secret: "sk-ant-oat01-setup-token-xyz", email: "dev@example.com" });
    const got = await service.acquire("claude");
    expect(got).not.toBeNull();
    const creds = JSON.parse(readFileSync(join(got!.configDir, ".credentials.json"), "utf8"));
    expect(creds).toEqual({ claudeAiOauth: { accessToken: "sk-ant-oat01-setup-token-xyz" } });
    expect(statSync(join(got!.configDir, ".credentials.json")).mode & 0o777).toBe(0o600);
    const state = JSON.parse(readFileSync(join(got!.configDir, ".claude.json"), "utf8"));
    expect(state).toMatchObject({ hasCompletedOnboarding: true, oauthAccount: { emailAddress: "dev@example.com" } });
    expect(got!.unset).toContain("ANTHROPIC_API_KEY");
    expect((await service.get("dev@example.com")).label).toBe("dev@example.com");
  });

  it("refreshes an OAuth token close to expiry before handing it out, and keeps the new one", async () => {
    const calls: Record<string, unknown>[] = [];
    const server = createServer((req: IncomingMessage, res) => {
      let body = "";
      req.on("data", (d) => (body += d));
      req.on("end", () => {
        calls.push(JSON.parse(body));
        res.writeHead(200, { "content-type": "application/json" });
        res.end(JSON.stringify({ access_token: "access-new-0002", refresh_token: "refresh-new-0002", expires_in: 28_800 }));
      });
    });
    await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
    try {
      await service.close();
      service = newService({ tokenUrl: `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1/oauth/token` });
      await service.add({ provider: "claude", kind: "oauth", label: "o", secret: "access-old-0001", refreshToken: "refresh-old-0001", expiresAt: Date.now() + 60_000 });
      const got = await service.acquire("claude");
      expect(calls).toEqual([{ grant_type: "refresh_token", refresh_token: "refresh-old-0001", client_id: "client-test" }]);
      const creds = JSON.parse(readFileSync(join(got!.configDir, ".credentials.json"), "utf8"));
      expect(creds.claudeAiOauth).toMatchObject({ accessToken: "access-new-0002", refreshToken: "refresh-new-0002" });
      expect(creds.claudeAiOauth.expiresAt).toBeGreaterThan(Date.now() + 8 * 3600_000 - 60_000);
      expect(secrets).toContain("access-new-0002");
      // fresh now: the next acquire does not refresh again
      await service.acquire("claude");
      expect(calls).toHaveLength(1);
    } finally {
      server.close();
    }
  });

  it("takes back tokens the CLI rotated itself in the config dir", async () => {
    const expiresAt = Date.now() + 3600_000;
    await service.add({ provider: "claude", kind: "oauth", label: "r", secret: "access-first-01", refreshToken: "refresh-first-01", expiresAt });
    const got = await service.acquire("claude");
    writeFileSync(join(got!.configDir, ".credentials.json"), JSON.stringify({ claudeAiOauth: { accessToken: "access-rotated-02", refreshToken: "refresh-rotated-02", expiresAt: expiresAt + 3600_000 } }));
    await service.acquire("claude");
    expect(await service.get("r")).toMatchObject({ secretHint: "…d-02", expiresAt: new Date(expiresAt + 3600_000).toISOString() });
  });

  it("an expired OAuth token without a refresh token marks the account invalid with a clear reason", async () => {
    await service.add({ provider: "claude", kind: "oauth", label: "old", secret: "access-expired-1", expiresAt: Date.now() - 1000 });
    await service.add({ provider: "claude", label: "spare", secret: "key-spare-0000" });
    const got = await service.acquire("claude", { prefer: "old" });
    expect(got?.label).toBe("spare");
    const old = await service.get("old");
    expect(old.status).toBe("invalid");
    expect(old.statusReason).toMatch(/expired at .* and there is no refresh token: log in again/);
    await service.reset("old");
    expect((await service.get("old")).status).toBe("available");
  });

  it("frees an exhausted account when its time passes and tells listeners", async () => {
    const a = await service.add({ provider: "claude", label: "a", secret: "key-aaaa-1111" });
    const freed: string[] = [];
    service.onAvailable((p) => freed.push(p));
    await service.markExhausted(a.id, Date.now() + 300, "limit");
    expect((await service.get("a")).status).toBe("exhausted");
    await new Promise((r) => setTimeout(r, 600));
    expect((await service.get("a")).status).toBe("available");
    expect(freed).toEqual(["claude"]);
  });

  it("rejects duplicates and bad input with clear errors", async () => {
    await service.add({ provider: "claude", label: "a", secret: "key-aaaa-1111" });
    await expect(service.add({ provider: "claude", label: "a", secret: "key-other-2222" })).rejects.toThrow(/labelled "a" exists/);
    await expect(service.add({ provider: "claude", label: "b", secret: "key-aaaa-1111" })).rejects.toThrow(/already registered/);
    await expect(service.add({ provider: "codex", kind: "setup-token", secret: "token-1234567" })).rejects.toThrow(/codex accounts are API keys/);
    await expect(service.add({ provider: "claude", secret: "short" })).rejects.toThrow(/at least 8/);
    await expect(service.remove("nope")).rejects.toThrow(/No account "nope"/);
  });

  it("takes accounts for any provider whose adapter says it can: the fake agent's are Claude's (CLAUDE_CONFIG_DIR)", async () => {
    await service.add({ provider: "fake", kind: "setup-token", label: "f", secret: "fake-setup-token-01" });
    expect((await service.list({ provider: "fake" })).map((a) => a.label)).toEqual(["f"]);
    expect(await service.acquire("claude")).toBeNull();
    const got = await service.acquire("fake");
    expect(got?.env).toEqual({ CLAUDE_CODE_OAUTH_TOKEN: "fake-setup-token-01" });
    expect(JSON.parse(readFileSync(join(got!.configDir, ".credentials.json"), "utf8"))).toEqual({ claudeAiOauth: { accessToken: "fake-setup-token-01" } });
  });

  it("refuses a provider whose adapter takes no accounts, and a kind it does not take, naming the field", async () => {
    await expect(service.add({ provider: "gemini", secret: "key-gemini-0001" })).rejects.toThrow(/^provider: "gemini" agents cannot run on accounts; expected one of claude, codex, fake$/);
    await expect(service.add({ provider: "nope", secret: "key-nope-00001" })).rejects.toThrow(/provider: "nope" agents cannot run on accounts/);
    await expect(service.add({ provider: "codex", kind: "oauth", secret: "token-1234567" })).rejects.toThrow(/^kind: codex accounts are API keys \(OPENAI_API_KEY\), not oauth$/);
    expect(await service.list()).toEqual([]);
  });
});

describe("sealing", () => {
  it("round-trips, keeps the key across instances, and refuses a tampered value", () => {
    const s1 = new Sealer(home);
    const sealed = s1.seal("secret-value-123");
    expect(sealed).not.toContain("secret-value-123");
    expect(new Sealer(home).open(sealed)).toBe("secret-value-123");
    expect(statSync(join(home, "account-key")).mode & 0o777).toBe(0o600);
    const parts = sealed.split(".");
    parts[3] = `${parts[3]!.startsWith("A") ? "B" : "A"}${parts[3]!.slice(1)}`;
    expect(() => s1.open(parts.join("."))).toThrow();
    expect(existsSync(join(home, "account-key"))).toBe(true);
  });

  it("with SWITCHYARD_SECRET_KEY: another data dir with the same key opens it, one without it says which key is missing; older values still open where their key file is", () => {
    const key = "k".repeat(40);
    const old = new Sealer(home).seal("sealed-before-the-key");
    const a = new Sealer(home, key);
    const sealed = a.seal("cluster-secret");
    expect(sealed.startsWith("k1.")).toBe(true);
    expect(a.open(old)).toBe("sealed-before-the-key");
    const elsewhere = mkdtempSync(join(tmpdir(), "switchyard-seal-"));
    try {
      const b = new Sealer(elsewhere, key);
      expect(b.open(sealed)).toBe("cluster-secret");
      expect(existsSync(join(elsewhere, "account-key"))).toBe(false);
      expect(() => b.open(old)).toThrow(/account-key is missing here/);
      expect(() => new Sealer(elsewhere, "x".repeat(40)).open(sealed)).toThrow();
      expect(() => new Sealer(join(elsewhere, "plain")).open(sealed)).toThrow(/set the same SWITCHYARD_SECRET_KEY/);
    } finally {
      rmSync(elsewhere, { recursive: true, force: true });
    }
  });
});
