import { execFileSync } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { openSqliteStore } from "../db/sqlite-store";
import { DomainError } from "../errors";
import type { AgentHost, SessionRef } from "./agent-host";
import { AgentRecords } from "./agent-records";
import { LocalAgentHost } from "./local-host";
import { assertJson, HOST_CALLS, loopbackHost } from "./loopback-host";

const tmp = mkdtempSync(join(tmpdir(), "switchyard-host-"));
afterAll(() => rmSync(tmp, { recursive: true, force: true }));

const GIT_ENV = { ...process.env, GIT_AUTHOR_NAME: "T", GIT_AUTHOR_EMAIL: "t@x.invalid", GIT_COMMITTER_NAME: "T", GIT_COMMITTER_EMAIL: "t@x.invalid" };
const git = (cwd: string, ...args: string[]) => execFileSync("git", args, { cwd, env: GIT_ENV, stdio: ["ignore", "pipe", "pipe"] }).toString().trim();

function hosts(): Array<[string, AgentHost]> {
  const local = new LocalAgentHost({ home: join(tmp, "home"), pollMs: 50 });
  return [
    ["local", local],
    ["loopback", loopbackHost(local)],
  ];
}

let seq = 0;
async function run(host: AgentHost, script: string): Promise<SessionRef> {
  const session = ++seq;
  return host.startSession({ agentId: "agent_t", session, dir: join(tmp, "agent"), command: "/bin/sh", args: ["-c", script], cwd: tmp, env: { PATH: process.env.PATH ?? "" } });
}

const text = (data: string) => Buffer.from(data, "base64").toString("utf8");

describe("the session seam (AgentHost)", () => {
  it("lists every method of the local host as a call (what a remote host answers)", () => {
    // `home` is a fact of the host (a getter), not a call
    const methods = Object.getOwnPropertyNames(LocalAgentHost.prototype).filter((m) => m !== "constructor" && m !== "home");
    expect([...methods].sort()).toEqual([...HOST_CALLS].sort());
  });

  for (const [name, host] of hosts()) {
    it(`${name}: starts a process, reads its output from a byte offset and the end of stderr, and knows its exit status`, async () => {
      const ref = await run(host, "printf 'one\\ntwo\\n'; printf 'e%.0s' $(seq 1 50) >&2; exit 3");
      expect(JSON.parse(JSON.stringify(ref))).toEqual(ref);
      const state = await host.waitForExit(ref, { timeoutMs: 10_000 });
      expect(state).toEqual({ running: false, exitCode: 3 });
      const all = await host.readOutput(ref, { stream: "stdout", offset: 0, maxBytes: 1024 });
      expect(text(all.data)).toBe("one\ntwo\n");
      expect(all.size).toBe(8);
      const rest = await host.readOutput(ref, { stream: "stdout", offset: 4, maxBytes: 1024 });
      expect({ offset: rest.offset, text: text(rest.data) }).toEqual({ offset: 4, text: "two\n" });
      const tail = await host.readOutput(ref, { stream: "stderr", offset: -10, maxBytes: 10 });
      expect({ offset: tail.offset, text: text(tail.data) }).toEqual({ offset: 40, text: "e".repeat(10) });
      // after a restart (a new host that never was the process's parent) the exit code is still known
      expect(await new LocalAgentHost({ home: join(tmp, "home") }).sessionState(ref)).toEqual({ running: false, exitCode: 3 });
    });

    it(`${name}: stops a running process group; waitForExit returns at its timeout while it runs`, async () => {
      const ref = await run(host, "sleep 30 & sleep 30; wait");
      const t0 = Date.now();
      expect((await host.waitForExit(ref, { timeoutMs: 150 })).running).toBe(true);
      expect(Date.now() - t0).toBeGreaterThanOrEqual(140);
      await host.stopSession(ref, { graceMs: 1000 });
      const state = await host.waitForExit(ref, { timeoutMs: 5000 });
      expect(state.running).toBe(false);
      expect(state.exitCode).toBe(143);
    });

    it(`${name}: makes a worktree, commits in it, pushes its branch, and removes it; a bad repository comes back as its DomainError`, async () => {
      const repo = join(tmp, `repo-${name}`);
      execFileSync("mkdir", ["-p", repo]);
      git(repo, "init", "-q", "-b", "main");
      writeFileSync(join(repo, "a.txt"), "a\n");
      git(repo, "add", ".");
      git(repo, "commit", "-qm", "first");
      const made = await host.createWorkspace({ worktreesDir: join(tmp, `wt-${name}`), alias: "blue-fox", repo });
      if (!made.ok) throw new Error(made.error.message);
      const ws = made.workspace;
      expect(ws.branch).toBe("switchyard/blue-fox");
      writeFileSync(join(ws.path, "b.txt"), "b\n");
      expect(await host.dirtyFiles(ws)).toEqual(["b.txt"]);
      const { commit, files } = await host.commitWorktree(ws, { message: "b", author: { name: "blue-fox (fake agent)", email: "blue-fox@agents.switchyard.invalid" } });
      expect(files).toEqual(["b.txt"]);
      expect(await host.commitsAhead(ws)).toBe(1);
      const bare = join(tmp, `remote-${name}.git`);
      git(tmp, "init", "-q", "--bare", bare);
      expect(await host.push(ws, { remote: bare })).toEqual({ commit });
      expect(git(bare, "rev-parse", "refs/heads/switchyard/blue-fox")).toBe(commit);
      const changes = await host.changes(ws);
      expect(changes.files.map((f) => f.path)).toEqual(["b.txt"]);
      await host.removeWorkspace(ws, {});
      expect(await host.workspaceExists(ws.path)).toBe(false);

      const plain = mkdtempSync(join(tmp, "plain-"));
      const refused = await host.createWorkspace({ worktreesDir: join(tmp, `wt-${name}`), alias: "red-owl", repo: plain });
      expect(refused).toMatchObject({ ok: false, error: { code: "REPO_NOT_GIT" } });
      const thrown = await host.push({ ...ws, kind: "directory" }, { remote: bare }).catch((e: unknown) => e);
      expect(thrown).toBeInstanceOf(DomainError);
      expect(thrown).toMatchObject({ code: "NOT_A_WORKTREE", kind: "CONFLICT" });
    });
  }

  it("refuses what JSON would change, naming where it is", async () => {
    expect(() => assertJson({ a: [1, { b: Buffer.from("x") }] }, "call")).toThrow("call.a[1].b is a Buffer");
    expect(() => assertJson({ f: () => 1 }, "call")).toThrow("call.f is a function");
    expect(() => assertJson([1, undefined], "call")).toThrow("call[1] is undefined");
    expect(() => assertJson({ n: Number.NaN }, "call")).toThrow("call.n is NaN");
    expect(() => assertJson({ d: new Date() }, "call")).toThrow("call.d is a Date");
    expect(() => assertJson({ m: new Map() }, "call")).toThrow("call.m is a Map");
    expect(() => assertJson({ ok: [1, "a", null, { x: true }], skipped: undefined }, "call")).not.toThrow();
    // a call with a value that only works in-process never reaches the host
    const host = loopbackHost(new LocalAgentHost({ home: join(tmp, "home") }));
    await expect(host.readOutput({ agentId: "a", session: 1, pid: 1, startTime: null, dir: tmp }, { stream: "stdout", offset: 0, maxBytes: Number.POSITIVE_INFINITY })).rejects.toThrow("is Infinity");
  });
});

describe("the agents table's JSON columns", () => {
  it("are typed and checked when read: a malformed value reads as its empty default", async () => {
    const store = openSqliteStore({ path: ":memory:", migrationsDir: resolve(import.meta.dirname, "..", "..", "drizzle") });
    try {
      const records = new AgentRecords(store);
      const now = Date.now();
      await records.insert({ id: "agent_j", alias: "j", provider: "fake", mode: "execute", permissionMode: "ask", prompt: "p", task: "t", workspacePath: "/w", workspaceKind: "worktree", configDir: "/c", createdAt: now, updatedAt: now });
      await records.update("agent_j", { pendingQuestions: [{ id: "q1", question: "why?" }], usageTotal: { inputTokens: 5, outputTokens: 7, costUsd: 0.5 } });
      expect(await records.get("agent_j")).toMatchObject({ pendingQuestions: [{ id: "q1", question: "why?" }], usageTotal: { inputTokens: 5, outputTokens: 7, costUsd: 0.5 } });
      store.db.$client.prepare("UPDATE agents SET pending_questions = ?, usage_total = ?, usage_session = ? WHERE id = ?").run('[{"id":1}]', "not json", '{"inputTokens":3}', "agent_j");
      const row = await records.get("agent_j");
      expect(row.pendingQuestions).toEqual([]);
      expect(row.usageTotal).toEqual({ inputTokens: 0, outputTokens: 0 });
      expect(row.usageSession).toEqual({ inputTokens: 3, outputTokens: 0 });
    } finally {
      await store.close();
    }
  });
});
