import { chmodSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { git, makeRepo } from "../testing/agents-world";
import { generateAlias } from "./aliases";
import { readSignal, writeInputFiles } from "./input-files";
import { buildPrompt } from "./prompts";
import { createWorkspace, removeWorkspace, workspaceChanges, workspaceDiff, workspaceSummary, workspaceTestHooks, type Workspace } from "./workspace";

const cleanup: string[] = [];
afterEach(() => {
  for (const d of cleanup.splice(0)) rmSync(d, { recursive: true, force: true });
});
function setup() {
  const repo = makeRepo("ws-repo-");
  const home = mkdtempSync(join(tmpdir(), "ws-home-"));
  cleanup.push(repo, home);
  return { repo, worktreesDir: join(home, "worktrees") };
}

describe("createWorkspace", () => {
  it("makes a worktree on switchyard/<alias> from HEAD or a named ref, isolated from the main checkout", async () => {
    const { repo, worktreesDir } = setup();
    git(repo, "checkout", "-q", "-b", "feature");
    writeFileSync(join(repo, "feature.txt"), "f\n");
    git(repo, "add", ".");
    git(repo, "commit", "-qm", "feature");
    git(repo, "checkout", "-q", "main");
    const ws = await createWorkspace({ worktreesDir, alias: "calm-otter", repo, baseRef: "feature" });
    expect(ws).toMatchObject({ kind: "worktree", branch: "switchyard/calm-otter", baseRef: "feature", path: join(worktreesDir, "calm-otter") });
    expect(existsSync(join(ws.path, "feature.txt"))).toBe(true);
    writeFileSync(join(ws.path, "new.txt"), "n\n");
    expect(existsSync(join(repo, "new.txt"))).toBe(false);
    expect(git(repo, "rev-parse", "--abbrev-ref", "HEAD")).toBe("main");
    const fromHead = await createWorkspace({ worktreesDir, alias: "bold-yak", repo });
    expect(existsSync(join(fromHead.path, "feature.txt"))).toBe(false);
    expect(fromHead.baseCommit).toBe(git(repo, "rev-parse", "HEAD"));
  });

  it("copies .worktreeinclude files (gitignored .env, a glob) and keeps .switchyard/ out of git status", async () => {
    const { repo, worktreesDir } = setup();
    writeFileSync(join(repo, ".gitignore"), ".env\nconfig/*.local\n");
    writeFileSync(join(repo, ".worktreeinclude"), "# secrets\n.env\nconfig/*.local\n");
    git(repo, "add", ".");
    git(repo, "commit", "-qm", "include");
    writeFileSync(join(repo, ".env"), "SECRET=1\n");
    mkdirSync(join(repo, "config"));
    writeFileSync(join(repo, "config", "a.local"), "a\n");
    const ws = await createWorkspace({ worktreesDir, alias: "neat-seal", repo });
    expect(readFileSync(join(ws.path, ".env"), "utf8")).toBe("SECRET=1\n");
    expect(readFileSync(join(ws.path, "config", "a.local"), "utf8")).toBe("a\n");
    await writeInputFiles(ws.path, { agentId: "agent_1", alias: "neat-seal", mode: "execute", task: "do it", provider: "fake" });
    expect(git(ws.path, "status", "--porcelain")).toBe("");
  });

  it("fails with typed errors and leaves nothing behind: bad ref, taken branch, missing repo, failing setup", async () => {
    const { repo, worktreesDir } = setup();
    await expect(createWorkspace({ worktreesDir, alias: "a-b", repo, baseRef: "nope" })).rejects.toMatchObject({ code: "BASE_REF_NOT_FOUND" });
    git(repo, "branch", "switchyard/c-d");
    await expect(createWorkspace({ worktreesDir, alias: "c-d", repo })).rejects.toMatchObject({ code: "BRANCH_EXISTS" });
    await expect(createWorkspace({ worktreesDir, alias: "e-f", repo: join(repo, "missing") })).rejects.toMatchObject({ code: "REPO_NOT_FOUND" });
    mkdirSync(join(repo, ".switchyard"));
    writeFileSync(join(repo, ".switchyard", "setup"), "#!/bin/sh\necho preparing\necho broken >&2\nexit 3\n");
    chmodSync(join(repo, ".switchyard", "setup"), 0o755);
    const out: string[] = [];
    await expect(createWorkspace({ worktreesDir, alias: "g-h", repo, onSetupOutput: (l) => out.push(l) })).rejects.toMatchObject({ code: "SETUP_FAILED", message: expect.stringContaining("broken") });
    expect(out).toEqual(expect.arrayContaining(["preparing", "broken"]));
    expect(existsSync(join(worktreesDir, "g-h"))).toBe(false);
    expect(git(repo, "branch", "--list", "switchyard/g-h")).toBe("");
    for (const alias of ["a-b", "e-f"]) expect(existsSync(join(worktreesDir, alias))).toBe(false);
  });

  it("refuses a directory that is not in a git repository (REPO_NOT_GIT, naming it), and makes nothing", async () => {
    const plain = mkdtempSync(join(tmpdir(), "ws-plain-"));
    const home = mkdtempSync(join(tmpdir(), "ws-home-"));
    cleanup.push(plain, home);
    writeFileSync(join(plain, "notes.txt"), "mine\n");
    const err = await createWorkspace({ worktreesDir: join(home, "w"), alias: "x-y", repo: plain }).catch((e: unknown) => e);
    expect(err).toMatchObject({ code: "REPO_NOT_GIT" });
    expect((err as Error).message).toContain(plain);
    expect((err as Error).message).toContain("--init");
    expect(existsSync(join(home, "w", "x-y"))).toBe(false);
    expect(existsSync(join(plain, ".git"))).toBe(false);
  });

  it("with init, makes the directory a repository (its files in a first commit) and branches from it", async () => {
    const plain = mkdtempSync(join(tmpdir(), "ws-plain-"));
    const home = mkdtempSync(join(tmpdir(), "ws-home-"));
    cleanup.push(plain, home);
    writeFileSync(join(plain, "notes.txt"), "mine\n");
    const ws = await createWorkspace({ worktreesDir: join(home, "w"), alias: "x-y", repo: plain, init: true });
    expect(ws).toMatchObject({ kind: "worktree", branch: "switchyard/x-y" });
    expect(git(plain, "log", "--format=%s")).toBe("Initial commit (made by Switchyard for an agent to branch from)");
    expect(readFileSync(join(ws.path, "notes.txt"), "utf8")).toBe("mine\n");
  });
});

describe("workspace changes and removal", () => {
  it("reports committed, uncommitted and untracked changes, refuses to remove dirty work unless forced", async () => {
    const { repo, worktreesDir } = setup();
    const ws = await createWorkspace({ worktreesDir, alias: "wise-owl", repo });
    writeFileSync(join(ws.path, "README.md"), "# changed\nmore\n");
    git(ws.path, "commit", "-qam", "edit");
    writeFileSync(join(ws.path, "untracked.txt"), "u1\nu2\n");
    const changes = await workspaceChanges(ws);
    expect(changes.commitsAhead).toBe(1);
    expect(changes.dirty).toBe(true);
    expect(changes.files).toEqual(expect.arrayContaining([expect.objectContaining({ path: "README.md", insertions: 2, deletions: 1 }), expect.objectContaining({ path: "untracked.txt", status: "?", insertions: 2 })]));
    const diff = await workspaceDiff(ws);
    expect(diff.patch).toContain("+# changed");
    expect(diff.patch).toContain("+++ b/untracked.txt");
    await expect(removeWorkspace(ws)).rejects.toMatchObject({ code: "WORKTREE_DIRTY", message: expect.stringContaining("untracked.txt") });
    expect(existsSync(ws.path)).toBe(true);
    await removeWorkspace(ws, { force: true });
    expect(existsSync(ws.path)).toBe(false);
    await removeWorkspace(ws, { force: true }); // idempotent
    expect(git(repo, "branch", "--list", "switchyard/wise-owl")).toContain("switchyard/wise-owl"); // work on the branch is kept
  });
});

describe("input files, signal, prompts, aliases", () => {
  it("writes manifest and task, and reads valid, malformed and mis-shaped signals", async () => {
    const dir = mkdtempSync(join(tmpdir(), "ws-in-"));
    cleanup.push(dir);
    const { manifestPath, taskPath, signalPath } = await writeInputFiles(dir, { agentId: "agent_1", alias: "a-b", mode: "plan", task: "Plan it", provider: "claude", files: { "ctx/a.md": "A" } });
    expect(JSON.parse(readFileSync(manifestPath, "utf8"))).toEqual({ agentId: "agent_1", alias: "a-b", mode: "plan", provider: "claude", files: ["task.md", "ctx/a.md"] });
    expect(readFileSync(taskPath, "utf8")).toMatch(/^---\nagentId: "agent_1"\nalias: "a-b"\nmode: plan\n---\n\nPlan it\n$/);
    expect(await readSignal(dir)).toBeNull();
    writeFileSync(signalPath, '{"status":"done","result":{"message":"m"}}');
    expect(await readSignal(dir)).toEqual({ signal: { status: "done", result: { message: "m" } } });
    writeFileSync(signalPath, "{oops");
    expect(await readSignal(dir)).toMatchObject({ error: expect.stringContaining("not valid JSON") });
    writeFileSync(signalPath, '{"status":"questions","questions":[]}');
    expect(await readSignal(dir)).toMatchObject({ error: expect.stringContaining("questions") });
  });

  it("builds prompts from templates with placeholders, overridable per mode", () => {
    const p = buildPrompt({ mode: "execute", task: "Fix the bug", agentId: "agent_9", alias: "calm-otter", workspacePath: "/w" });
    expect(p).toContain("Fix the bug");
    expect(p).toContain("/w/.switchyard/output/signal.json");
    expect(p).not.toMatch(/\{\{\w+\}\}/);
    const overrides = mkdtempSync(join(tmpdir(), "ws-prompts-"));
    cleanup.push(overrides);
    writeFileSync(join(overrides, "review.md"), "CUSTOM REVIEW of {{task}} by {{alias}}");
    const custom = buildPrompt({ mode: "review", task: "PR 7", agentId: "a", alias: "x-y", workspacePath: "/w", overridesDir: overrides });
    expect(custom.startsWith("CUSTOM REVIEW of PR 7 by x-y")).toBe(true);
    expect(custom).toContain("signal.json");
  });

  it("generates adjective-animal aliases and avoids taken ones", () => {
    expect(generateAlias(() => false)).toMatch(/^[a-z]+-[a-z]+$/);
    const always = generateAlias((a) => !a.endsWith("-3"), () => 0);
    expect(always).toMatch(/^[a-z]+-[a-z]+-3$/);
  });
});

describe("workspaceSummary", () => {
  it("agrees with workspaceChanges and workspaceDiff: added, modified, deleted, committed and untracked files", async () => {
    const { repo, worktreesDir } = setup();
    writeFileSync(join(repo, "old.txt"), "a\nb\nc\n");
    git(repo, "add", ".");
    git(repo, "commit", "-qm", "old");
    const ws = await createWorkspace({ worktreesDir, alias: "sum-fox", repo });
    writeFileSync(join(ws.path, "README.md"), "# changed\nmore\n");
    rmSync(join(ws.path, "old.txt"));
    writeFileSync(join(ws.path, "committed.txt"), "1\n2\n");
    git(ws.path, "add", "committed.txt");
    git(ws.path, "commit", "-qm", "committed");
    mkdirSync(join(ws.path, "new"));
    writeFileSync(join(ws.path, "new", "untracked.txt"), "x\ny\nz\n");
    const summary = await workspaceSummary(ws, { maxBytes: 1 << 20 });
    const changes = await workspaceChanges(ws);
    const diff = await workspaceDiff(ws);
    const byPath = <T extends { path: string }>(xs: T[]) => [...xs].sort((a, b) => a.path.localeCompare(b.path));
    expect(byPath(summary.files)).toEqual(byPath(changes.files));
    expect(summary).toMatchObject({ insertions: changes.insertions, deletions: changes.deletions, commitsAhead: 1, dirty: true, truncated: false });
    expect(summary.patch).toBe(diff.patch);
    const cut = await workspaceSummary(ws, { maxBytes: 40 });
    expect(cut.truncated).toBe(true);
    expect(cut.patch).toHaveLength(40);
  });

  it("a read that the worktree's removal overlaps is done again from the kept branch (or finds no changes without one)", async () => {
    const { repo, worktreesDir } = setup();
    const committedWorkspace = async (alias: string, commit: boolean): Promise<Workspace> => {
      const ws = await createWorkspace({ worktreesDir, alias, repo });
      if (!commit) return ws;
      writeFileSync(join(ws.path, "kept.txt"), "on the branch\n");
      git(ws.path, "add", "kept.txt");
      git(ws.path, "commit", "-qm", "kept");
      return ws;
    };
    // cleanup removes the worktree after the read has begun and before git runs in it
    const removedDuringRead = async <T>(ws: Workspace, read: () => Promise<T>, deleteBranch = false): Promise<T> => {
      let removals = 0;
      workspaceTestHooks.beforeWorktreeRead = async (path) => {
        if (path === ws.path && removals++ === 0) await removeWorkspace(ws, { deleteBranch });
      };
      try {
        return await read();
      } finally {
        delete workspaceTestHooks.beforeWorktreeRead;
        expect(removals).toBe(1);
        expect(existsSync(ws.path)).toBe(false);
      }
    };
    const a = await committedWorkspace("race-ant", true);
    const summary = await removedDuringRead(a, () => workspaceSummary(a, { maxBytes: 1 << 20 }));
    expect(summary).toMatchObject({ files: [{ path: "kept.txt", status: "A", insertions: 1, deletions: 0 }], commitsAhead: 1, dirty: false, truncated: false });
    expect(summary.patch).toContain("+on the branch");
    const b = await committedWorkspace("race-bee", true);
    expect(await removedDuringRead(b, () => workspaceChanges(b))).toMatchObject({ files: [{ path: "kept.txt", status: "A" }], insertions: 1, commitsAhead: 1 });
    const c = await committedWorkspace("race-cat", true);
    expect((await removedDuringRead(c, () => workspaceDiff(c))).patch).toContain("+on the branch");
    const d = await committedWorkspace("race-dog", false);
    expect(await removedDuringRead(d, () => workspaceSummary(d, { maxBytes: 1 << 20 }), true)).toMatchObject({ files: [], commitsAhead: 0, patch: "" });
  });
});
