import { spawn } from "node:child_process";
import { existsSync, readdirSync, statSync } from "node:fs";
import { appendFile, cp, mkdir, readFile, rm } from "node:fs/promises";
import { dirname, isAbsolute, join, normalize, relative, resolve } from "node:path";
import { createInterface } from "node:readline";
import type { FileChange } from "../../shared/agents";
import { DomainError } from "../errors";
import { bareRepoOf, git, gitMany, identityEnv, repoRootOf } from "./git";
import type { WorktreeGit } from "./providers/types";

export interface WorkspaceRequest {
  /** <SWITCHYARD_HOME>/worktrees */
  worktreesDir: string;
  alias: string;
  /** A directory: a git repository (any subdirectory of one) or not. */
  repo: string;
  /** Default: the repository's current HEAD. */
  baseRef?: string;
  /** When `repo` is not in a git repository: make it one (its files in a first commit) instead of refusing (REPO_NOT_GIT). */
  init?: boolean;
  /** Overrides the repository's `.switchyard/setup` file. */
  setupCommand?: string;
  onSetupOutput?: (line: string, stream: "stdout" | "stderr") => void;
}

export interface Workspace {
  kind: "worktree" | "directory";
  path: string;
  repoRoot: string | null;
  branch: string | null;
  baseRef: string | null;
  baseCommit: string | null;
  /**
   * Read the committed branch only, never a worktree at `path` (changes, diff, summary of an agent
   * whose worktree is on a worker connected nowhere: its branch as pushed to this server).
   */
  branchOnly?: boolean;
}

const OWN_DIR = ".switchyard/";

/** Test support, never set in production: runs when a read of a worktree's files begins. */
export const workspaceTestHooks: { beforeWorktreeRead?: (path: string) => Promise<void> } = {};

/**
 * A read of a worktree (changes, diff, summary) can meet its removal (cleanup at idle, the sweep,
 * a user's cleanup): git run in a directory being deleted fails, or sees files vanish. The reads
 * under way are noted per path; a removal marks the ones it overlaps, which are then done again
 * once it is over: from the kept branch, which holds everything (only a clean worktree is removed
 * on its own; a deleted branch had no commits). A removal never waits for a read.
 */
type WorktreeRead = { overlapped: boolean };
const worktreeReads = new Map<string, Set<WorktreeRead>>();
const worktreeRemovals = new Map<string, Promise<unknown>>();

async function readWorktree<T>(ws: Workspace, fromWorktree: () => Promise<T>, fromBranch: () => Promise<T>): Promise<T> {
  for (;;) {
    while (worktreeRemovals.has(ws.path)) await worktreeRemovals.get(ws.path);
    if (ws.branchOnly || !existsSync(ws.path)) return fromBranch();
    const read: WorktreeRead = { overlapped: false };
    const reads = worktreeReads.get(ws.path) ?? new Set<WorktreeRead>();
    worktreeReads.set(ws.path, reads.add(read));
    try {
      await workspaceTestHooks.beforeWorktreeRead?.(ws.path);
      const result = await fromWorktree();
      if (!read.overlapped) return result;
    } catch (err) {
      if (!read.overlapped) throw err;
    } finally {
      reads.delete(read);
      if (reads.size === 0 && worktreeReads.get(ws.path) === reads) worktreeReads.delete(ws.path);
    }
  }
}

/** Removes a worktree's directory; the reads of it under way are done again afterwards. */
function removingWorktree(path: string, remove: () => Promise<unknown>): Promise<unknown> {
  for (const read of worktreeReads.get(path) ?? []) read.overlapped = true;
  const done = remove();
  const settled = done.catch(() => undefined);
  worktreeRemovals.set(path, settled);
  void settled.then(() => {
    if (worktreeRemovals.get(path) === settled) worktreeRemovals.delete(path);
  });
  return done;
}

/**
 * git's worktree commands are not safe to run at once on one repository (a worktree being added
 * is read half-made by another `worktree add`): they are serialized per repository.
 */
const repoLocks = new Map<string, Promise<unknown>>();

export function withRepoLock<T>(root: string, fn: () => Promise<T>): Promise<T> {
  const prev = repoLocks.get(root) ?? Promise.resolve();
  const next = prev.then(fn, fn);
  const settled = next.catch(() => undefined);
  repoLocks.set(root, settled);
  void settled.then(() => {
    if (repoLocks.get(root) === settled) repoLocks.delete(root);
  });
  return next;
}

/** REPO_NOT_GIT for a path outside any git repository, naming it and the way out. */
export function repoNotGit(path: string): DomainError {
  return new DomainError("REPO_NOT_GIT", `${path} is not a git repository: an agent works on its own branch of one. Run \`git init\` there (and commit), or spawn with --init to have Switchyard make it one`, { details: { path } });
}

/**
 * `git init` in a directory and a first commit of what it holds (Switchyard as committer when
 * git has no identity), so agents can branch from it. Returns the repository's root.
 */
async function initRepository(dir: string): Promise<string> {
  await git(["init", "-q"], { cwd: dir });
  const env = await identityEnv(dir);
  await git(["add", "-A"], { cwd: dir, env });
  await git(["commit", "-q", "--allow-empty", "--no-verify", "-m", "Initial commit (made by Switchyard for an agent to branch from)"], { cwd: dir, env });
  return (await git(["rev-parse", "--show-toplevel"], { cwd: dir })).trim();
}

/**
 * A git worktree on branch `switchyard/<alias>` at `<worktreesDir>/<alias>`. A path outside any
 * git repository is refused (REPO_NOT_GIT) unless `init` says to make it one. Every git failure
 * is fatal and typed: never fall back to the main checkout.
 */
export async function createWorkspace(req: WorkspaceRequest): Promise<Workspace> {
  const repo = resolve(req.repo);
  if (!existsSync(repo) || !statSync(repo).isDirectory()) throw new DomainError("REPO_NOT_FOUND", `${repo} is not a directory`);
  await mkdir(req.worktreesDir, { recursive: true });
  const path = join(req.worktreesDir, req.alias);
  if (existsSync(path)) throw new DomainError("WORKTREE_EXISTS", `${path} already exists: pick another alias or remove it`, { kind: "CONFLICT" });
  // a bare repository (a URL's mirror) has no checkout: its worktrees are made from it all the same
  let root = (await repoRootOf(repo)) ?? (await bareRepoOf(repo));
  if (!root && !req.init) throw repoNotGit(repo);
  root ??= await initRepository(repo);
  const baseRef = req.baseRef ?? "HEAD";
  let baseCommit: string;
  try {
    baseCommit = (await git(["rev-parse", "--verify", "--quiet", `${baseRef}^{commit}`], { cwd: root })).trim();
  } catch {
    const hint = baseRef === "HEAD" ? " (does the repository have a commit yet?)" : "";
    throw new DomainError("BASE_REF_NOT_FOUND", `Base ref "${baseRef}" does not name a commit in ${root}${hint}`);
  }
  const branch = `switchyard/${req.alias}`;
  await withRepoLock(root, async () => {
    if (await branchExists(root, branch)) throw new DomainError("BRANCH_EXISTS", `Branch ${branch} already exists in ${root}`, { kind: "CONFLICT" });
    try {
      await git(["worktree", "add", "-b", branch, path, baseCommit], { cwd: root });
    } catch (err) {
      await rm(path, { recursive: true, force: true });
      throw new DomainError("WORKTREE_FAILED", `Could not create the worktree: ${(err as Error).message}`, { cause: err });
    }
  });
  const ws: Workspace = { kind: "worktree", path, repoRoot: root, branch, baseRef, baseCommit };
  try {
    await excludeOwnDir(root);
    await copyIncludes(root, path);
    await runSetup(root, path, req);
  } catch (err) {
    await withRepoLock(root, async () => {
      await git(["worktree", "remove", "--force", path], { cwd: root }).catch(() => undefined);
      await rm(path, { recursive: true, force: true });
      await git(["worktree", "prune"], { cwd: root }).catch(() => undefined);
      await git(["branch", "-D", branch], { cwd: root }).catch(() => undefined);
    });
    throw err;
  }
  return ws;
}

export async function branchExists(root: string, branch: string): Promise<boolean> {
  try {
    await git(["show-ref", "--verify", "--quiet", `refs/heads/${branch}`], { cwd: root });
    return true;
  } catch {
    return false;
  }
}

/** `.switchyard/` (agent input and output) never shows in git status: the shared info/exclude. */
async function excludeOwnDir(root: string): Promise<void> {
  const common = (await git(["rev-parse", "--git-common-dir"], { cwd: root })).trim();
  const file = join(isAbsolute(common) ? common : join(root, common), "info", "exclude");
  const text = existsSync(file) ? await readFile(file, "utf8") : "";
  if (text.split("\n").some((l) => l.trim() === OWN_DIR)) return;
  await mkdir(dirname(file), { recursive: true });
  await appendFile(file, `${text === "" || text.endsWith("\n") ? "" : "\n"}${OWN_DIR}\n`);
}

function globRegex(pattern: string): RegExp {
  let re = "";
  for (let i = 0; i < pattern.length; i++) {
    const c = pattern[i]!;
    if (c === "*" && pattern[i + 1] === "*") {
      re += ".*";
      i++;
      if (pattern[i + 1] === "/") i++;
    } else if (c === "*") re += "[^/]*";
    else if (c === "?") re += "[^/]";
    else re += c.replace(/[.+^${}()|[\]\\]/g, "\\$&");
  }
  return new RegExp(`^${re}$`);
}

function walk(root: string, dir = "", depth = 0, out: string[] = []): string[] {
  if (depth > 8 || out.length > 10_000) return out;
  for (const entry of readdirSync(join(root, dir), { withFileTypes: true })) {
    if (entry.name === ".git" || entry.name === "node_modules") continue;
    const rel = dir ? `${dir}/${entry.name}` : entry.name;
    out.push(rel);
    if (entry.isDirectory()) walk(root, rel, depth + 1, out);
  }
  return out;
}

/** Files named in `.worktreeinclude` (gitignored ones such as `.env`) are copied into the worktree. */
async function copyIncludes(root: string, path: string): Promise<void> {
  const listFile = join(root, ".worktreeinclude");
  if (!existsSync(listFile)) return;
  const patterns = (await readFile(listFile, "utf8"))
    .split("\n")
    .map((l) => l.trim())
    .filter((l) => l && !l.startsWith("#"))
    .map((l) => l.replace(/^\/+/, "").replace(/\/+$/, ""));
  let all: string[] | undefined;
  for (const pattern of patterns) {
    if (normalize(pattern).startsWith("..")) throw new DomainError("WORKTREE_INCLUDE_INVALID", `.worktreeinclude: "${pattern}" points outside the repository`);
    const matches = /[*?]/.test(pattern) ? (all ??= walk(root)).filter((rel) => globRegex(pattern).test(rel)) : existsSync(join(root, pattern)) ? [pattern] : [];
    for (const rel of matches) {
      const target = join(path, rel);
      if (relative(path, target).startsWith("..")) continue;
      await mkdir(dirname(target), { recursive: true });
      await cp(join(root, rel), target, { recursive: true, preserveTimestamps: true, force: true });
    }
  }
}

async function runSetup(root: string, path: string, req: WorkspaceRequest): Promise<void> {
  const file = join(root, ".switchyard", "setup");
  const command = req.setupCommand ?? (existsSync(file) ? file : undefined);
  if (!command) return;
  const tail: string[] = [];
  const code = await new Promise<number | null>((res) => {
    const child = spawn("/bin/sh", req.setupCommand ? ["-c", command] : [command], { cwd: path, stdio: ["ignore", "pipe", "pipe"] });
    const pipe = (stream: NodeJS.ReadableStream, name: "stdout" | "stderr") =>
      createInterface({ input: stream }).on("line", (line) => {
        tail.push(line);
        if (tail.length > 10) tail.shift();
        req.onSetupOutput?.(line, name);
      });
    pipe(child.stdout, "stdout");
    pipe(child.stderr, "stderr");
    child.on("error", () => res(null));
    child.on("close", (c) => res(c));
  });
  if (code !== 0) {
    throw new DomainError("SETUP_FAILED", `The setup command (${req.setupCommand ? command : ".switchyard/setup"}) exited with ${code ?? "an error"}${tail.length ? `:\n${tail.join("\n")}` : ""}`);
  }
}

/** Uncommitted paths of a worktree (untracked ones too), our own `.switchyard/` left out. */
export async function dirtyFiles(ws: Workspace): Promise<string[]> {
  const out = await git(["status", "--porcelain", "--untracked-files=all"], { cwd: ws.path });
  return out
    .split("\n")
    .filter(Boolean)
    .map((l) => l.slice(3))
    .filter((p) => !p.startsWith(OWN_DIR));
}

/** Remove a workspace; refuses (WORKTREE_DIRTY) to throw away uncommitted work unless forced. */
export async function removeWorkspace(ws: Workspace, opts: { force?: boolean; deleteBranch?: boolean } = {}): Promise<void> {
  if (ws.kind === "directory") {
    if (!existsSync(ws.path)) return;
    const files = readdirSync(ws.path).filter((f) => f !== ".switchyard");
    if (files.length > 0 && !opts.force) throw new DomainError("WORKTREE_DIRTY", `${ws.path} holds the agent's files (${files.slice(0, 10).join(", ")}): remove with force`, { kind: "CONFLICT", details: { files } });
    await rm(ws.path, { recursive: true, force: true });
    return;
  }
  const root = ws.repoRoot!;
  if (existsSync(ws.path)) {
    const dirty = await dirtyFiles(ws);
    if (dirty.length > 0 && !opts.force) {
      throw new DomainError("WORKTREE_DIRTY", `The worktree ${ws.path} has uncommitted changes: ${dirty.slice(0, 10).join(", ")}${dirty.length > 10 ? ", ..." : ""}`, {
        kind: "CONFLICT",
        details: { files: dirty },
      });
    }
    await removingWorktree(ws.path, () => withRepoLock(root, () => git(["worktree", "remove", "--force", ws.path], { cwd: root }).catch(async () => rm(ws.path, { recursive: true, force: true }))));
  }
  await withRepoLock(root, () => git(["worktree", "prune"], { cwd: root }).catch(() => undefined));
  if (opts.deleteBranch && ws.branch && (await branchExists(root, ws.branch))) {
    const ahead = ws.baseCommit ? Number((await git(["rev-list", "--count", `${ws.baseCommit}..${ws.branch}`], { cwd: root })).trim()) : 1;
    if (ahead === 0 || opts.force) await git(["branch", "-D", ws.branch], { cwd: root });
  }
}

function countLines(text: string): number {
  if (text === "") return 0;
  return text.split("\n").length - (text.endsWith("\n") ? 1 : 0);
}

/** Changes of the workspace against its base commit: committed, uncommitted and untracked. */
export async function workspaceChanges(ws: Workspace) {
  if (ws.kind === "directory" || !ws.baseCommit) {
    return { dirty: false, files: [] as FileChange[], insertions: 0, deletions: 0, commitsAhead: 0 };
  }
  const base = ws.baseCommit;
  return readWorktree(ws, () => worktreeChanges(ws, base), () => branchChanges(ws));
}

async function worktreeChanges(ws: Workspace, base: string) {
  const scope = ["--", ".", `:(exclude)${OWN_DIR}`];
  // independent reads: run at once (each git start costs a few ms)
  const [numstat, names, untrackedOut, ahead, dirty] = await Promise.all([
    git(["diff", "--numstat", base, ...scope], { cwd: ws.path }),
    git(["diff", "--name-status", base, ...scope], { cwd: ws.path }),
    git(["ls-files", "--others", "--exclude-standard"], { cwd: ws.path }),
    git(["rev-list", "--count", `${base}..HEAD`], { cwd: ws.path }),
    dirtyFiles(ws),
  ]);
  const files = fileChanges(numstat, names);
  const untracked = untrackedOut.split("\n").filter((p) => p && !p.startsWith(OWN_DIR));
  for (const path of untracked) {
    const text = await readFile(join(ws.path, path), "utf8").catch(() => "");
    files.push({ path, status: "?", insertions: countLines(text), deletions: 0 });
  }
  return {
    dirty: dirty.length > 0,
    files,
    ...totals(files),
    commitsAhead: Number(ahead.trim()),
  };
}

/** A unified diff of the workspace against its base commit (untracked files as new files), capped. */
export async function workspaceDiff(ws: Workspace, opts: { maxBytes?: number } = {}): Promise<{ patch: string; truncated: boolean }> {
  const max = opts.maxBytes ?? 1 << 20;
  if (ws.kind === "directory" || !ws.baseCommit) return { patch: "", truncated: false };
  const base = ws.baseCommit;
  return readWorktree(ws, () => worktreeDiff(ws, base, max), () => branchDiff(ws, base, max));
}

/** A cleaned-up worktree's diff: what its branch holds (all committed; no branch, no commits). */
async function branchDiff(ws: Workspace, base: string, max: number): Promise<{ patch: string; truncated: boolean }> {
  if (!ws.repoRoot || !ws.branch || !(await branchExists(ws.repoRoot, ws.branch))) return { patch: "", truncated: false };
  const committed = await git(["diff", base, ws.branch, "--", ".", `:(exclude)${OWN_DIR}`], { cwd: ws.repoRoot });
  return committed.length > max ? { patch: committed.slice(0, max), truncated: true } : { patch: committed, truncated: false };
}

async function worktreeDiff(ws: Workspace, base: string, max: number): Promise<{ patch: string; truncated: boolean }> {
  const [tracked, untrackedOut] = await Promise.all([
    git(["diff", base, "--", ".", `:(exclude)${OWN_DIR}`], { cwd: ws.path }),
    git(["ls-files", "--others", "--exclude-standard"], { cwd: ws.path }),
  ]);
  let patch = tracked;
  const untracked = untrackedOut.split("\n").filter((p) => p && !p.startsWith(OWN_DIR));
  for (const path of untracked) {
    if (patch.length > max) break;
    const text = await readFile(join(ws.path, path), "utf8").catch(() => "");
    const lines = text.split("\n");
    if (text.endsWith("\n")) lines.pop();
    patch += newFilePatch(path, lines);
  }
  return patch.length > max ? { patch: patch.slice(0, max), truncated: true } : { patch, truncated: false };
}

/** An untracked file as a unified-diff "new file" entry. */
function newFilePatch(path: string, lines: string[]): string {
  return `diff --git a/${path} b/${path}\nnew file mode 100644\n--- /dev/null\n+++ b/${path}\n@@ -0,0 +1,${lines.length} @@\n${lines.map((l) => `+${l}`).join("\n")}\n`;
}

function totals(files: FileChange[]): { insertions: number; deletions: number } {
  return { insertions: files.reduce((n, f) => n + f.insertions, 0), deletions: files.reduce((n, f) => n + f.deletions, 0) };
}

/** Files with their +/- (`git diff --numstat`) and status letter (`--name-status`). */
function fileChanges(numstat: string, names: string): FileChange[] {
  const status = new Map(names.split("\n").filter(Boolean).map((l) => [l.split("\t").at(-1)!, l[0]!]));
  return numstat
    .split("\n")
    .filter(Boolean)
    .map((l) => {
      const [ins, del, ...rest] = l.split("\t");
      const path = rest.join("\t");
      return { path, status: status.get(path) ?? "M", insertions: Number(ins) || 0, deletions: Number(del) || 0 };
    });
}

/** The changes of a cleaned-up worktree's branch against its base (nothing is uncommitted any more). */
async function branchChanges(ws: Workspace) {
  const none = { dirty: false, files: [] as FileChange[], insertions: 0, deletions: 0, commitsAhead: 0 };
  if (!ws.repoRoot || !ws.branch || !ws.baseCommit || !(await branchExists(ws.repoRoot, ws.branch))) return none;
  const cwd = ws.repoRoot;
  const scope = ["--", ".", `:(exclude)${OWN_DIR}`];
  const [numstat, names] = await Promise.all([
    git(["diff", "--numstat", ws.baseCommit, ws.branch, ...scope], { cwd }),
    git(["diff", "--name-status", ws.baseCommit, ws.branch, ...scope], { cwd }),
  ]);
  const files = fileChanges(numstat, names);
  const commitsAhead = Number((await git(["rev-list", "--count", `${ws.baseCommit}..${ws.branch}`], { cwd })).trim());
  return { dirty: false, files, ...totals(files), commitsAhead };
}

/** Commits on the worktree's branch beyond its base commit (0 when the branch is gone). */
export async function commitsAhead(ws: Workspace): Promise<number> {
  if (ws.kind !== "worktree" || !ws.repoRoot || !ws.branch || !ws.baseCommit || !(await branchExists(ws.repoRoot, ws.branch))) return 0;
  return Number((await git(["rev-list", "--count", `${ws.baseCommit}..${ws.branch}`], { cwd: ws.repoRoot })).trim());
}

/** Bring back a cleaned-up worktree at its old path: on its branch when kept, else a new one from the base commit. */
export async function restoreWorktree(ws: Workspace): Promise<void> {
  if (ws.kind !== "worktree" || !ws.repoRoot || !ws.branch || !ws.baseCommit) throw new DomainError("WORKSPACE_REMOVED", `${ws.path} cannot be restored: it was not a git worktree`, { kind: "CONFLICT" });
  if (existsSync(ws.path)) return;
  const root = ws.repoRoot;
  const branch = ws.branch;
  const base = ws.baseCommit;
  await withRepoLock(root, async () => {
    await git(["worktree", "prune"], { cwd: root }).catch(() => undefined);
    if (await branchExists(root, branch)) await git(["worktree", "add", ws.path, branch], { cwd: root });
    else await git(["worktree", "add", "-b", branch, ws.path, base], { cwd: root });
  });
  await excludeOwnDir(root);
}

/**
 * Changes and a capped diff in one go (what a CLI step hands to the next step): three git reads
 * at once (the patch, the status, the commit count) instead of seven; per-file counts and
 * statuses come from the patch itself.
 */
export async function workspaceSummary(ws: Workspace, opts: { maxBytes: number }) {
  if (ws.kind === "directory" || !ws.baseCommit) {
    const [changes, diff] = await Promise.all([workspaceChanges(ws), workspaceDiff(ws, { maxBytes: opts.maxBytes })]);
    return { ...changes, ...diff };
  }
  const base = ws.baseCommit;
  const fromBranch = async () => {
    const [changes, diff] = await Promise.all([branchChanges(ws), branchDiff(ws, base, opts.maxBytes)]);
    return { ...changes, ...diff };
  };
  return readWorktree(ws, () => worktreeSummary(ws, base, opts.maxBytes), fromBranch);
}

async function worktreeSummary(ws: Workspace, base: string, maxBytes: number) {
  const [tracked, status, ahead] = (await gitMany(
    [
      ["diff", "--no-color", "--no-ext-diff", base, "--", ".", `:(exclude)${OWN_DIR}`],
      ["status", "--porcelain", "--untracked-files=all"],
      ["rev-list", "--count", `${base}..HEAD`],
    ],
    { cwd: ws.path },
  )) as [string, string, string];
  const files: FileChange[] = [];
  for (const part of tracked.split(/^(?=diff --git )/m)) {
    const header = /^diff --git a\/(.+?) b\/(.+)$/m.exec(part);
    if (!header) continue;
    const status = /^new file mode/m.test(part) ? "A" : /^deleted file mode/m.test(part) ? "D" : /^rename from/m.test(part) ? "R" : "M";
    let insertions = 0;
    let deletions = 0;
    const body = part.slice(part.search(/^@@/m) >= 0 ? part.search(/^@@/m) : part.length);
    for (const line of body.split("\n")) {
      if (line.startsWith("+")) insertions++;
      else if (line.startsWith("-")) deletions++;
    }
    files.push({ path: header[2]!, status, insertions, deletions });
  }
  const dirty = status.split("\n").filter(Boolean).map((l) => l.slice(3)).filter((p) => !p.startsWith(OWN_DIR));
  const untracked = status.split("\n").filter((l) => l.startsWith("?? ")).map((l) => l.slice(3)).filter((p) => !p.startsWith(OWN_DIR));
  let patch = tracked;
  for (const path of untracked) {
    const text = await readFile(join(ws.path, path), "utf8").catch(() => "");
    const lines = text.split("\n");
    if (text.endsWith("\n")) lines.pop();
    files.push({ path, status: "?", insertions: lines.length, deletions: 0 });
    if (patch.length <= maxBytes) patch += newFilePatch(path, lines);
  }
  const truncated = patch.length > maxBytes;
  return {
    dirty: dirty.length > 0,
    files,
    ...totals(files),
    commitsAhead: Number(ahead.trim()),
    patch: truncated ? patch.slice(0, maxBytes) : patch,
    truncated,
  };
}

/**
 * Where a commit in a worktree writes: its own git dir and the repository's common dir (one git
 * child). The reflog folder of the agent's branch is made when missing, so a CLI whose sandbox
 * may write only existing folders can still record the commit.
 */
export async function worktreeGit(path: string, branch: string): Promise<WorktreeGit> {
  const [gitDir, commonDir] = (await git(["rev-parse", "--path-format=absolute", "--git-dir", "--git-common-dir"], { cwd: path })).trim().split("\n") as [string, string];
  await mkdir(join(commonDir, "logs", "refs", "heads", dirname(branch)), { recursive: true });
  return { gitDir, commonDir, branch };
}

export interface CommitIdentity {
  name: string;
  email: string;
}

/**
 * Commit everything in a worktree (Switchyard's own `.switchyard/` excluded) on its branch: the
 * agent as author, the repository's identity as committer (Switchyard's when it has none). Hooks
 * do not run: this is a snapshot of what the agent left, reviewed before it is merged. Returns
 * the commit and the paths it holds.
 */
export async function commitWorktree(ws: Workspace, opts: { message: string; author: CommitIdentity }): Promise<{ commit: string; files: string[] }> {
  if (ws.kind !== "worktree") throw new DomainError("NOT_A_WORKTREE", "Only a git worktree can be committed", { kind: "CONFLICT" });
  const env: NodeJS.ProcessEnv = { ...(await identityEnv(ws.path)), GIT_AUTHOR_NAME: opts.author.name, GIT_AUTHOR_EMAIL: opts.author.email };
  // `.switchyard/` is in the repository's info/exclude; a worktree made before that was not
  await git(["add", "-A"], { cwd: ws.path, env });
  let files = (await git(["diff", "--cached", "--name-only", "-z"], { cwd: ws.path })).split("\0").filter(Boolean);
  if (files.some((f) => f.startsWith(OWN_DIR))) {
    await git(["rm", "-r", "-q", "--cached", "--", OWN_DIR], { cwd: ws.path, env });
    files = files.filter((f) => !f.startsWith(OWN_DIR));
  }
  if (files.length === 0) throw new DomainError("NOTHING_TO_COMMIT", `Nothing to commit in ${ws.path}`, { kind: "CONFLICT" });
  await git(["commit", "--no-verify", "--quiet", "-F", "-"], { cwd: ws.path, env, input: opts.message });
  return { commit: (await git(["rev-parse", "HEAD"], { cwd: ws.path })).trim(), files };
}
