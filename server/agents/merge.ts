import { existsSync } from "node:fs";
import { DomainError } from "../errors";
import { git, gitResult } from "./git";
import { withRepoLock, type Workspace } from "./workspace";

/**
 * Merge an agent's branch into a local branch of its repository (default: the branch it started
 * from). When the target is checked out somewhere (usually the main checkout), git merges there,
 * only if that checkout is clean; otherwise the merge is computed without a checkout
 * (`merge-tree`) and the branch moved with a compare-and-swap. A conflict changes nothing and
 * names the files.
 */
export interface MergeResult {
  merged: boolean;
  into: string;
  branch: string;
  commit: string | null;
  /** Why nothing was merged (nothing new on the branch). */
  reason?: string;
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

export async function mergeWorkspace(ws: Workspace, opts: { into?: string; message?: string } = {}): Promise<MergeResult> {
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
  const message = opts.message ?? `Merge ${branch} into ${into}`;
  const env = await identityEnv(root);
  return withRepoLock(root, async () => {
    const ahead = Number((await git(["rev-list", "--count", `${into}..${branch}`], { cwd: root })).trim());
    if (ahead === 0) return { merged: false, into, branch, commit: null, reason: `${branch} has no commits that ${into} lacks` };
    const checkout = await checkedOutAt(root, into);
    if (checkout) return mergeInCheckout(checkout, into, branch, message, env);
    return mergeWithoutCheckout(root, into, branch, message, env);
  });
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

async function mergeInCheckout(checkout: string, into: string, branch: string, message: string, env: NodeJS.ProcessEnv): Promise<MergeResult> {
  const dirty = ownFilesExcluded(await git(["status", "--porcelain", "--untracked-files=no"], { cwd: checkout }));
  if (dirty.length > 0) {
    throw new DomainError("MERGE_TARGET_DIRTY", `${into} is checked out at ${checkout} with uncommitted changes (${dirty.slice(0, 10).join(", ")}): commit or stash them first`, { kind: "CONFLICT", details: { files: dirty } });
  }
  const r = await gitResult(["merge", "--no-ff", "--no-edit", "-m", message, branch], { cwd: checkout, env });
  if (r.code !== 0) {
    const conflicted = (await gitResult(["diff", "--name-only", "--diff-filter=U"], { cwd: checkout })).stdout.split("\n").filter(Boolean);
    await gitResult(["merge", "--abort"], { cwd: checkout });
    if (conflicted.length > 0) throw conflict(into, branch, conflicted);
    throw new DomainError("MERGE_FAILED", `git merge failed: ${(r.stderr || r.stdout).trim()}`);
  }
  return { merged: true, into, branch, commit: (await git(["rev-parse", "HEAD"], { cwd: checkout })).trim() };
}

async function mergeWithoutCheckout(root: string, into: string, branch: string, message: string, env: NodeJS.ProcessEnv): Promise<MergeResult> {
  const old = (await git(["rev-parse", `refs/heads/${into}`], { cwd: root })).trim();
  const r = await gitResult(["merge-tree", "--write-tree", "--name-only", into, branch], { cwd: root });
  if (r.code === 1) {
    // first line: the tree with conflict markers; then the conflicted paths until a blank line
    const files = r.stdout.split("\n").slice(1).filter((l, i, all) => l !== "" && all.slice(0, i).every((x) => x !== ""));
    throw conflict(into, branch, files);
  }
  if (r.code !== 0) throw new DomainError("MERGE_FAILED", `git merge-tree failed: ${r.stderr.trim()}`);
  const tree = r.stdout.split("\n")[0]!.trim();
  const commit = (await git(["commit-tree", tree, "-p", old, "-p", branch, "-m", message], { cwd: root, env })).trim();
  await git(["update-ref", `refs/heads/${into}`, commit, old], { cwd: root });
  return { merged: true, into, branch, commit };
}

function conflict(into: string, branch: string, files: string[]): DomainError {
  return new DomainError("MERGE_CONFLICT", `Merging ${branch} into ${into} conflicts in ${files.join(", ")}: nothing was changed`, { kind: "CONFLICT", details: { files } });
}
