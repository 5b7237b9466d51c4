import { spawn } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { removeHome, startTestServer, storeContents, TEST_STORE, type TestServer } from "../testing/server-harness";

/** `yard account` against the real server: secrets go in (also from stdin), never come out. */
const yard = resolve(import.meta.dirname, "..", "..", "bin", "yard.mjs");
let t: TestServer;
let dir: string;

function runYard(args: string[], stdin?: string): Promise<{ code: number | null; out: string; err: string }> {
  return new Promise((res) => {
    const child = spawn(process.execPath, [yard, ...args], { env: { ...process.env, SWITCHYARD_URL: t.url }, stdio: [stdin === undefined ? "ignore" : "pipe", "pipe", "pipe"] });
    let out = "";
    let err = "";
    child.stdout!.on("data", (d) => (out += d));
    child.stderr!.on("data", (d) => (err += d));
    child.on("exit", (code) => res({ code, out, err }));
    if (stdin !== undefined) child.stdin!.end(stdin);
  });
}

beforeAll(async () => {
  t = await startTestServer();
  dir = mkdtempSync(join(tmpdir(), "switchyard-acct-"));
});
afterAll(async () => {
  await t.stop();
  removeHome(t.home);
  rmSync(dir, { recursive: true, force: true });
});

describe("yard account", () => {
  it("adds a setup token, an API key from stdin and an OAuth login file; lists them without secrets; removes one", async () => {
    const token = "sk-ant-oat01-cli-setup-token-AAAA";
    const added = await runYard(["account", "add", "--provider", "claude", "--token", token, "--email", "dev@example.com", "--json"]);
    expect(added.code, added.err).toBe(0);
    expect(added.out).not.toContain(token);
    expect(JSON.parse(added.out)).toMatchObject({ label: "dev@example.com", kind: "setup-token", secretHint: "…AAAA", status: "available" });

    const key = "sk-proj-codex-key-from-stdin-BBBB";
    const fromStdin = await runYard(["account", "add", "--provider", "codex", "--api-key", "-", "--label", "codex-main", "--json"], `${key}\n`);
    expect(fromStdin.code, fromStdin.err).toBe(0);
    expect(JSON.parse(fromStdin.out)).toMatchObject({ label: "codex-main", provider: "codex", kind: "api-key", secretHint: "…BBBB" });

    const file = join(dir, ".credentials.json");
    writeFileSync(file, JSON.stringify({ claudeAiOauth: { accessToken: "oauth-access-CCCC", refreshToken: "oauth-refresh-DDDD", expiresAt: Date.now() + 3600_000 } }));
    const oauth = await runYard(["account", "add", "--provider", "claude", "--oauth-file", file, "--label", "max", "--json"]);
    expect(oauth.code, oauth.err).toBe(0);
    expect(JSON.parse(oauth.out)).toMatchObject({ label: "max", kind: "oauth", secretHint: "…CCCC" });

    const list = await runYard(["account", "list"]);
    expect(list.code).toBe(0);
    expect(list.out).toMatch(/^LABEL\s+PROVIDER\s+KIND\s+SECRET\s+AGENTS\s+STATUS$/m);
    expect(list.out).toMatch(/dev@example\.com\s+claude\s+setup-token\s+…AAAA\s+0\s+available/);
    expect(list.out).toMatch(/codex-main\s+codex\s+api-key/);
    for (const secret of [token, key, "oauth-access-CCCC", "oauth-refresh-DDDD"]) expect(list.out).not.toContain(secret);

    const dup = await runYard(["account", "add", "--provider", "claude", "--api-key", "another-key-EEEE", "--label", "max"]);
    expect(dup.code).not.toBe(0);
    expect(dup.err).toContain('An account labelled "max" exists');

    const removed = await runYard(["account", "remove", "max"]);
    expect(removed.code, removed.err).toBe(0);
    expect((await runYard(["account", "list"])).out).not.toContain("max ");
    // nothing secret reached the server's log either
    for (const secret of [token, key, "oauth-access-CCCC"]) expect(t.logs.join("\n")).not.toContain(secret);
    if (TEST_STORE === "postgres") {
      // sealed with keys from SWITCHYARD_SECRET_KEY (the cluster's), no key file in the data dir
      expect(existsSync(join(t.home, "account-key"))).toBe(false);
      expect(await storeContents(t.home)).not.toContain(token);
    } else {
      expect(existsSync(join(t.home, "account-key"))).toBe(true);
      expect(readFileSync(join(t.home, "account-key"), "utf8")).not.toContain(token);
    }
  });

  it("explains bad input with a non-zero exit", async () => {
    const noProvider = await runYard(["account", "add", "--api-key", "k-12345678"]);
    expect(noProvider.code).not.toBe(0);
    expect(noProvider.err).toContain("required option '--provider <name>' not specified");
    expect(noProvider.err).toContain("Usage: yard account add");
    const badKind = await runYard(["account", "add", "--provider", "codex", "--token", "tok-12345678"]);
    expect(badKind.code).not.toBe(0);
    expect(badKind.err).toContain("codex accounts are API keys");
  });
});
