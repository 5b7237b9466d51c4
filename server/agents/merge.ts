import { existsSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { DomainError } from "../errors";
import { git, gitResult } from "./git";
import { withRepoLock, type Workspace } from "./workspace";

/**
 * Merge an agent's branch into a local branch of its repository (default: the branch it started
 * from). When the target is checked out somewhere (usually the main checkout), git merges there,
 * only if that checkout is clean; otherwise the merge is computed without a checkout
 * (`merge-tree`) and the branch moved with a compare-and-swap. A conflict changes nothing and
 * names the files. Strategies: `merge` (a merge commit), `squash` (one commit with the branch's
 * changes) and `rebase` (the branch's commits replayed on the target, which then fast-forwards).
 */
export type MergeStrategy = "merge" | "squash" | "rebase";

export interface MergeResult {
  merged: boolean;
  into: string;
  branch: string;
  commit: string | null;
  /** Why nothing was merged (nothing new on the branch). */
  reason?: string;
  strategy: MergeStrategy;
}

async function identityEnv(root: string): Promise<NodeJS.ProcessEnv> {
  const email = await gitResult(["config", "user.email"], { cwd: root });
  if (email.code === 0 && email.stdout.trim()) return process.env;
  return { ...process.env, GIT_AUTHOR_NAME: "Switchyard", GIT_AUTHOR_EMAIL: "switchyard@localhost", GIT_COMMITTER_NAME: "Switchyard", GIT_COMMITTER_EMAIL: "switchyard@localhost" };
}

function ownFilesExcluded(status: string): string[] {
  return status
    .split("\n")
    .filter(Boolean)
    .map((l) => l.slice(3))
    .filter((p) => !p.startsWith(".switchyard/"));
}

export async function mergeWorkspace(ws: Workspace, opts: { into?: string; message?: string; strategy?: MergeStrategy } = {}): Promise<MergeResult> {
  if (ws.kind !== "worktree" || !ws.repoRoot || !ws.branch) throw new DomainError("NOT_A_WORKTREE", "Only an agent working in a git worktree can be merged", { kind: "CONFLICT" });
  const root = ws.repoRoot;
  const branch = ws.branch;
  if ((await gitResult(["show-ref", "--verify", "--quiet", `refs/heads/${branch}`], { cwd: root })).code !== 0) {
    throw new DomainError("BRANCH_NOT_FOUND", `The branch ${branch} no longer exists (cleanup deletes a branch without commits): nothing to merge`, { kind: "CONFLICT" });
  }
  // a cleaned-up worktree is gone: its branch holds everything (cleanup never removes uncommitted work)
  const dirty = existsSync(ws.path) ? ownFilesExcluded(await git(["status", "--porcelain", "--untracked-files=all"], { cwd: ws.path })) : [];
  if (dirty.length > 0) {
    throw new DomainError("WORKTREE_DIRTY", `The agent's worktree has uncommitted changes (${dirty.slice(0, 10).join(", ")}): ask it to commit, or commit them yourself, before merging`, { kind: "CONFLICT", details: { files: dirty } });
  }
  const into = opts.into ?? (ws.baseRef && ws.baseRef !== "HEAD" ? ws.baseRef : (await git(["symbolic-ref", "--short", "HEAD"], { cwd: root }).catch(() => "")).trim());
  if (!into || (await gitResult(["show-ref", "--verify", "--quiet", `refs/heads/${into}`], { cwd: root })).code !== 0) {
    throw new DomainError("MERGE_TARGET_INVALID", `"${into || "(detached HEAD)"}" is not a local branch of ${root}: pick the branch to merge into`);
  }
  const strategy = opts.strategy ?? "merge";
  const env = await identityEnv(root);
  return withRepoLock(root, async () => {
    const ahead = Number((await git(["rev-list", "--count", `${into}..${branch}`], { cwd: root })).trim());
    if (ahead === 0) return { merged: false, into, branch, commit: null, reason: `${branch} has no commits that ${into} lacks`, strategy };
    const checkout = await checkedOutAt(root, into);
    if (checkout) await assertClean(checkout, into);
    if (strategy === "merge") {
      const message = opts.message ?? `Merge ${branch} into ${into}`;
      const result = checkout ? await mergeInCheckout(checkout, into, branch, message, env) : await mergeWithoutCheckout(root, into, branch, message, env);
      return { ...result, strategy };
    }
    const old = (await git(["rev-parse", `refs/heads/${into}`], { cwd: root })).trim();
    const commit =
      strategy === "squash"
        ? await squashCommit(root, into, branch, old, opts.message ?? `${branch} (squashed, ${ahead} commit${ahead === 1 ? "" : "s"})`, env)
        : await rebasedHead(root, into, branch, old, env);
    // the target only moves forward: in its clean checkout (working tree updated) or by compare-and-swap
    if (checkout) await git(["merge", "--ff-only", commit], { cwd: checkout, env });
    else await git(["update-ref", `refs/heads/${into}`, commit, old], { cwd: root });
    return { merged: true, into, branch, commit, strategy };
  });
}

async function assertClean(checkout: string, into: string): Promise<void> {
  const dirty = ownFilesExcluded(await git(["status", "--porcelain", "--untracked-files=no"], { cwd: checkout }));
  if (dirty.length > 0) {
    throw new DomainError("MERGE_TARGET_DIRTY", `${into} is checked out at ${checkout} with uncommitted changes (${dirty.slice(0, 10).join(", ")}): commit or stash them first`, { kind: "CONFLICT", details: { files: dirty } });
  }
}

/** merge-tree's result tree, or the conflict (nothing written anywhere). */
async function mergedTree(root: string, into: string, branch: string): Promise<string> {
  const r = await gitResult(["merge-tree", "--write-tree", "--name-only", into, branch], { cwd: root });
  if (r.code === 1) {
    // first line: the tree with conflict markers; then the conflicted paths until a blank line
    const files = r.stdout.split("\n").slice(1).filter((l, i, all) => l !== "" && all.slice(0, i).every((x) => x !== ""));
    throw conflict(into, branch, files);
  }
  if (r.code !== 0) throw new DomainError("MERGE_FAILED", `git merge-tree failed: ${r.stderr.trim()}`);
  return r.stdout.split("\n")[0]!.trim();
}

async function squashCommit(root: string, into: string, branch: string, old: string, message: string, env: NodeJS.ProcessEnv): Promise<string> {
  const tree = await mergedTree(root, into, branch);
  return (await git(["commit-tree", tree, "-p", old, "-m", message], { cwd: root, env })).trim();
}

/** The branch's commits cherry-picked onto the target in a throw-away detached worktree. */
async function rebasedHead(root: string, into: string, branch: string, old: string, env: NodeJS.ProcessEnv): Promise<string> {
  const base = (await git(["merge-base", old, branch], { cwd: root })).trim();
  const dir = mkdtempSync(join(tmpdir(), "switchyard-rebase-"));
  const tmp = join(dir, "wt");
  await git(["worktree", "add", "--detach", tmp, old], { cwd: root });
  try {
    const r = await gitResult(["cherry-pick", "--allow-empty", "--keep-redundant-commits", `${base}..${branch}`], { cwd: tmp, env });
    if (r.code !== 0) {
      const files = (await gitResult(["diff", "--name-only", "--diff-filter=U"], { cwd: tmp })).stdout.split("\n").filter(Boolean);
      await gitResult(["cherry-pick", "--abort"], { cwd: tmp });
      if (files.length > 0) throw conflict(into, branch, files);
      throw new DomainError("MERGE_FAILED", `git cherry-pick failed: ${(r.stderr || r.stdout).trim()}`);
    }
    return (await git(["rev-parse", "HEAD"], { cwd: tmp })).trim();
  } finally {
    await gitResult(["worktree", "remove", "--force", tmp], { cwd: root });
    rmSync(dir, { recursive: true, force: true });
  }
}

async function checkedOutAt(root: string, branch: string): Promise<string | null> {
  const list = await git(["worktree", "list", "--porcelain"], { cwd: root });
  let path: string | null = null;
  for (const line of list.split("\n")) {
    if (line.startsWith("worktree ")) path = line.slice(9);
    else if (line === `branch refs/heads/${branch}`) return path;
  }
  return null;
}

async function mergeInCheckout(checkout: string, into: string, branch: string, message: string, env: NodeJS.ProcessEnv): Promise<Omit<MergeResult, "strategy">> {
  const r = await gitResult(["merge", "--no-ff", "--no-edit", "-m", message, branch], { cwd: checkout, env });
  if (r.code !== 0) {
    const conflicted = (await gitResult(["diff", "--name-only", "--diff-filter=U"], { cwd: checkout })).stdout.split("\n").filter(Boolean);
    await gitResult(["merge", "--abort"], { cwd: checkout });
    if (conflicted.length > 0) throw conflict(into, branch, conflicted);
    throw new DomainError("MERGE_FAILED", `git merge failed: ${(r.stderr || r.stdout).trim()}`);
  }
  return { merged: true, into, branch, commit: (await git(["rev-parse", "HEAD"], { cwd: checkout })).trim() };
}

async function mergeWithoutCheckout(root: string, into: string, branch: string, message: string, env: NodeJS.ProcessEnv): Promise<Omit<MergeResult, "strategy">> {
  const old = (await git(["rev-parse", `refs/heads/${into}`], { cwd: root })).trim();
  const tree = await mergedTree(root, into, branch);
  const commit = (await git(["commit-tree", tree, "-p", old, "-p", branch, "-m", message], { cwd: root, env })).trim();
  await git(["update-ref", `refs/heads/${into}`, commit, old], { cwd: root });
  return { merged: true, into, branch, commit };
}

function conflict(into: string, branch: string, files: string[]): DomainError {
  return new DomainError("MERGE_CONFLICT", `Merging ${branch} into ${into} conflicts in ${files.join(", ")}: nothing was changed`, { kind: "CONFLICT", details: { files } });
}
