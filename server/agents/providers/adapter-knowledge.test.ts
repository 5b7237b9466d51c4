import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { claudeProvider } from "./claude";
import { codexProvider } from "./codex";
import { fakeProvider } from "./fake";
import { accountProviders, getProvider, listProviders, PROVIDERS } from "./index";
import { PROVIDER_NAMES } from "../../../shared/provider-names";
import type { AccountCredentials } from "./types";

/** What each adapter knows beyond its command line: tools in permission terms, approvals, accounts. */

const tmp = mkdtempSync(join(tmpdir(), "adapter-knowledge-"));
afterAll(() => rmSync(tmp, { recursive: true, force: true }));

const creds = (over: Partial<AccountCredentials> = {}): AccountCredentials => ({ kind: "api-key", secret: "sk-test-0001", refreshToken: null, expiresAt: null, email: null, ...over });

describe("tool -> permission", () => {
  it("claude and the fake agent: file tools by path, readers by path/pattern/url, anything else a command", () => {
    for (const p of [claudeProvider, fakeProvider]) {
      expect(p.permissionOf("Write", { file_path: "/w/a.txt", content: "x" })).toEqual({ operation: "fs.write", resource: "/w/a.txt" });
      expect(p.permissionOf("Edit", { file_path: "/w/b.txt" })).toEqual({ operation: "fs.write", resource: "/w/b.txt" });
      expect(p.permissionOf("Grep", { pattern: "TODO" })).toEqual({ operation: "fs.read", resource: "TODO" });
      expect(p.permissionOf("WebFetch", { url: "https://example.com" })).toEqual({ operation: "fs.read", resource: "https://example.com" });
      expect(p.permissionOf("Bash", { command: "ls -a" })).toEqual({ operation: "fs.exec", resource: "ls -a" });
      expect(p.permissionOf("mcp__x__y", { a: 1 })).toEqual({ operation: "fs.exec", resource: 'mcp__x__y {"a":1}' });
    }
  });

  it("codex names its own tools: apply_patch and file_change write; Claude's names mean nothing to it", () => {
    expect(codexProvider.permissionOf("apply_patch", { path: "src/a.ts" })).toEqual({ operation: "fs.write", resource: "src/a.ts" });
    expect(codexProvider.permissionOf("file_change", { path: "src/b.ts" })).toEqual({ operation: "fs.write", resource: "src/b.ts" });
    expect(codexProvider.permissionOf("command_execution", { command: "git status" })).toEqual({ operation: "fs.exec", resource: "git status" });
    expect(codexProvider.permissionOf("Write", { file_path: "/w/a.txt" }).operation).toBe("fs.exec");
  });

  it("every adapter answers, also for input that is not an object", () => {
    for (const p of Object.values(PROVIDERS)) {
      expect(p.permissionOf("Something", null)).toEqual({ operation: "fs.exec", resource: "Something null" });
    }
  });
});

describe("approvals", () => {
  it("only the CLIs with a permission-prompt tool route `ask` to a human; every adapter says what ask means", () => {
    const human = Object.values(PROVIDERS).filter((p) => p.approvals.human).map((p) => p.name).sort();
    expect(human).toEqual(["claude", "fake"]);
    for (const p of Object.values(PROVIDERS)) expect(p.approvals.askMeans.length).toBeGreaterThan(10);
    expect(codexProvider.approvals.askMeans).toMatch(/cannot ask/);
    // the dashboard reads the same through agents.providers
    expect(listProviders().find((p) => p.name === "codex")?.approvals).toEqual(codexProvider.approvals);
  });
});

describe("accounts", () => {
  it("claude, codex and the fake agent take accounts, each with its own credential kinds", () => {
    expect(accountProviders().sort()).toEqual(["claude", "codex", "fake"]);
    expect(getProvider("gemini").accounts).toBeUndefined();
    expect(codexProvider.accounts?.kinds).toEqual(["api-key"]);
    expect(fakeProvider.accounts).toBe(claudeProvider.accounts);
    expect(listProviders().find((p) => p.name === "opencode")?.accounts).toBeNull();
  });

  it("claude (and so the fake agent): an API key in the env, the other auth variables unset; a setup token in .credentials.json", async () => {
    const dir = join(tmp, "claude-acct");
    mkdirSync(dir, { recursive: true });
    const key = await fakeProvider.accounts!.materialize(dir, creds({ secret: "sk-ant-key-0001" }));
    expect(key).toEqual({ env: { ANTHROPIC_API_KEY: "sk-ant-key-0001" }, unset: ["ANTHROPIC_AUTH_TOKEN", "CLAUDE_CODE_OAUTH_TOKEN"] });
    expect(JSON.parse(readFileSync(join(dir, ".claude.json"), "utf8"))).toMatchObject({ hasCompletedOnboarding: true });
    const token = await claudeProvider.accounts!.materialize(dir, creds({ kind: "setup-token", secret: "sk-ant-oat01-tok" }));
    expect(token.env).toEqual({ CLAUDE_CODE_OAUTH_TOKEN: "sk-ant-oat01-tok" });
    expect(JSON.parse(readFileSync(join(dir, ".credentials.json"), "utf8"))).toEqual({ claudeAiOauth: { accessToken: "sk-ant-oat01-tok" } });
  });

  it("codex: the key as OPENAI_API_KEY, nothing written", async () => {
    const dir = join(tmp, "codex-acct");
    mkdirSync(dir, { recursive: true });
    expect(await codexProvider.accounts!.materialize(dir, creds({ secret: "sk-openai-0002" }))).toEqual({ env: { OPENAI_API_KEY: "sk-openai-0002" }, unset: [] });
    expect(existsSync(join(dir, ".credentials.json"))).toBe(false);
  });

  it("a session moves between config dirs by the files named after it (claude's projects/, codex's sessions/)", async () => {
    const id = "01a20375-b544-7cb0-9910-c0f2dc9d1668";
    const from = join(tmp, "from");
    mkdirSync(join(from, "projects", "-w-tree"), { recursive: true });
    writeFileSync(join(from, "projects", "-w-tree", `${id}.jsonl`), "{}\n");
    mkdirSync(join(from, "sessions", "2030", "01", "01"), { recursive: true });
    writeFileSync(join(from, "sessions", "2030", "01", "01", `rollout-2030-01-01T00-00-00-${id}.jsonl`), "{}\n");
    writeFileSync(join(from, "other.jsonl"), "{}\n");
    expect(await claudeProvider.accounts!.copySession(from, join(tmp, "to-claude"), id)).toBe(2);
    expect(existsSync(join(tmp, "to-claude", "projects", "-w-tree", `${id}.jsonl`))).toBe(true);
    expect(await codexProvider.accounts!.copySession(from, join(tmp, "to-codex"), id)).toBe(2);
    expect(existsSync(join(tmp, "to-codex", "sessions", "2030", "01", "01", `rollout-2030-01-01T00-00-00-${id}.jsonl`))).toBe(true);
    expect(existsSync(join(tmp, "to-codex", "other.jsonl"))).toBe(false);
  });
});

describe("the providers' names", () => {
  it("shared/provider-names.ts (what `yard agent spawn --help` lists) names every adapter, in order", () => {
    expect(Object.keys(PROVIDERS)).toEqual([...PROVIDER_NAMES]);
    expect(listProviders().map((p) => p.name)).toEqual([...PROVIDER_NAMES]);
  });
});
