import { existsSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { AgentMerge, MergeResult, MergeStrategy } from "../../shared/agents";
import { DomainError } from "../errors";
import { git, gitResult, identityEnv } from "./git";
import { withRepoLock, type Workspace } from "./workspace";

/**
 * Merge an agent's branch into a local branch of its repository (default: the branch it started
 * from). When the target is checked out somewhere (usually the main checkout), git merges there,
 * only if that checkout is clean; otherwise the merge is computed without a checkout
 * (`merge-tree`) and the branch moved with a compare-and-swap. A conflict changes nothing and
 * names the files. Strategies: `merge` (a merge commit), `squash` (one commit with the branch's
 * changes) and `rebase` (the branch's commits replayed on the target, which then fast-forwards).
 * Merging is idempotent: after a merge recorded for the same target, only the branch's commits
 * since the merged head are brought in (squash and rebase replay just those), and none at all is
 * "already merged".
 */
export type { MergeStrategy };

/** What an earlier merge recorded (the agent row), read under the repository lock. */
export type PreviousMerge = Pick<AgentMerge, "into" | "strategy" | "commit" | "head">;

export interface MergeOptions {
  into?: string;
  message?: string;
  strategy?: MergeStrategy;
  /** The last recorded merge of this branch; read under the repository lock, so two merges cannot both bring the work in. */
  previous?: () => PreviousMerge | null | Promise<PreviousMerge | null>;
  /**
   * Called (and awaited) under the repository lock once the target has moved (to record the merge);
   * `old`: where the target was. A throw here fails the merge (the target has moved: undoing it is the caller's).
   */
  onMerged?: (result: MergeResult & { commit: string; head: string; old: string }) => void | Promise<void>;
}

function ownFilesExcluded(status: string): string[] {
  return status
    .split("\n")
    .filter(Boolean)
    .map((l) => l.slice(3))
    .filter((p) => !p.startsWith(".switchyard/"));
}

export async function mergeWorkspace(ws: Workspace, opts: MergeOptions = {}): Promise<MergeResult> {
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
    const head = (await git(["rev-parse", `refs/heads/${branch}`], { cwd: root })).trim();
    const old = (await git(["rev-parse", `refs/heads/${into}`], { cwd: root })).trim();
    const nothing = (reason: string): MergeResult => ({ merged: false, into, branch, commit: null, head: null, commits: 0, reason, strategy });
    const previous = await stillMerged(root, (await opts.previous?.()) ?? null, into, head);
    const fresh = previous ? await count(root, `${previous.head}..${head}`) : 0;
    if (previous && fresh === 0) return nothing(`already merged into ${into} as ${previous.commit.slice(0, 8)} (${previous.strategy}): no commits since`);
    const ahead = await count(root, `${into}..${head}`);
    if (ahead === 0) return nothing(`${branch} has no commits that ${into} lacks`);
    const commits = previous ? fresh : ahead;
    const checkout = await checkedOutAt(root, into);
    if (checkout) await assertClean(checkout, into);
    const done = async (commit: string): Promise<MergeResult> => {
      const result = { merged: true, into, branch, commit, head, commits, strategy };
      await opts.onMerged?.({ ...result, old });
      return result;
    };
    if (strategy === "merge") {
      const message = opts.message ?? `Merge ${branch} into ${into}`;
      return done(checkout ? await mergeInCheckout(checkout, into, branch, head, message, env) : await mergeWithoutCheckout(root, into, branch, head, message, env));
    }
    const message = opts.message ?? `${branch} (squashed, ${commits} ${previous ? "new " : ""}commit${commits === 1 ? "" : "s"})`;
    // after a recorded merge only the commits since its head are replayed (the rest is on the target already)
    const commit =
      strategy === "rebase"
        ? await rebasedHead(root, into, branch, head, old, previous?.head ?? null, env)
        : previous
          ? await squashSince(root, into, branch, head, previous.head, old, message, env)
          : await squashCommit(root, into, branch, old, message, env);
    if (!commit) return nothing(`the ${commits} commit${commits === 1 ? "" : "s"} of ${branch} since ${previous!.head.slice(0, 8)} change nothing on ${into}`);
    // the target only moves forward: in its clean checkout (working tree updated) or by compare-and-swap
    if (checkout) await git(["merge", "--ff-only", commit], { cwd: checkout, env });
    else await git(["update-ref", `refs/heads/${into}`, commit, old], { cwd: root });
    return done(commit);
  });
}

const count = async (root: string, range: string) => Number((await git(["rev-list", "--count", range], { cwd: root })).trim());

const isAncestor = async (root: string, commit: string, of: string) => (await gitResult(["merge-base", "--is-ancestor", commit, of], { cwd: root })).code === 0;

/**
 * The previous merge when it still holds: same target, its commit still on the target (not reset
 * away) and its head still on the branch (not rewritten). Otherwise the branch merges as a whole.
 */
async function stillMerged(root: string, previous: PreviousMerge | null, into: string, head: string): Promise<PreviousMerge | null> {
  if (!previous || previous.into !== into) return null;
  const [onTarget, onBranch] = await Promise.all([isAncestor(root, previous.commit, `refs/heads/${into}`), isAncestor(root, previous.head, head)]);
  return onTarget && onBranch ? previous : null;
}

/** Commits on the agent's branch after `head` (its last merged head): null when never merged or unknown. */
export async function commitsSince(ws: Workspace, head: string | null): Promise<number | null> {
  if (!head || !ws.repoRoot || !ws.branch) return null;
  const r = await gitResult(["rev-list", "--count", `${head}..refs/heads/${ws.branch}`], { cwd: ws.repoRoot });
  return r.code === 0 ? Number(r.stdout.trim()) : null;
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

/** The branch's commits after `since` (default: its merge base with the target) cherry-picked onto the target. */
async function rebasedHead(root: string, into: string, branch: string, head: string, old: string, since: string | null, env: NodeJS.ProcessEnv): Promise<string> {
  const base = since ?? (await git(["merge-base", old, head], { cwd: root })).trim();
  return inScratchWorktree(root, old, async (tmp) => {
    await cherryPick(tmp, ["--allow-empty", "--keep-redundant-commits", `${base}..${head}`], into, branch, env);
    return (await git(["rev-parse", "HEAD"], { cwd: tmp })).trim();
  });
}

/**
 * One commit on the target with the changes of the branch's commits after `since` (merge-tree
 * cannot take another merge base on this git): null when they change nothing there.
 */
async function squashSince(root: string, into: string, branch: string, head: string, since: string, old: string, message: string, env: NodeJS.ProcessEnv): Promise<string | null> {
  return inScratchWorktree(root, old, async (tmp) => {
    await cherryPick(tmp, ["--no-commit", `${since}..${head}`], into, branch, env);
    const tree = (await git(["write-tree"], { cwd: tmp })).trim();
    if (tree === (await git(["rev-parse", `${old}^{tree}`], { cwd: root })).trim()) return null;
    return (await git(["commit-tree", tree, "-p", old, "-m", message], { cwd: root, env })).trim();
  });
}

/** `fn` in a throw-away worktree detached at `at`, removed afterwards whatever happens. */
async function inScratchWorktree<T>(root: string, at: string, fn: (dir: string) => Promise<T>): Promise<T> {
  const dir = mkdtempSync(join(tmpdir(), "switchyard-rebase-"));
  const tmp = join(dir, "wt");
  await git(["worktree", "add", "--detach", tmp, at], { cwd: root });
  try {
    return await fn(tmp);
  } finally {
    await gitResult(["worktree", "remove", "--force", tmp], { cwd: root });
    rmSync(dir, { recursive: true, force: true });
  }
}

/** cherry-pick in a scratch worktree; a conflict is aborted and named. */
async function cherryPick(tmp: string, args: string[], into: string, branch: string, env: NodeJS.ProcessEnv): Promise<void> {
  const r = await gitResult(["cherry-pick", ...args], { cwd: tmp, env });
  if (r.code === 0) return;
  const files = (await gitResult(["diff", "--name-only", "--diff-filter=U"], { cwd: tmp })).stdout.split("\n").filter(Boolean);
  await gitResult(["cherry-pick", "--abort"], { cwd: tmp });
  if (files.length > 0) throw conflict(into, branch, files);
  throw new DomainError("MERGE_FAILED", `git cherry-pick failed: ${(r.stderr || r.stdout).trim()}`);
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

/** `git merge` in the target's clean checkout (aborted on conflict): the merge commit. */
async function mergeInCheckout(checkout: string, into: string, branch: string, head: string, message: string, env: NodeJS.ProcessEnv): Promise<string> {
  const r = await gitResult(["merge", "--no-ff", "--no-edit", "-m", message, head], { cwd: checkout, env });
  if (r.code !== 0) {
    const conflicted = (await gitResult(["diff", "--name-only", "--diff-filter=U"], { cwd: checkout })).stdout.split("\n").filter(Boolean);
    await gitResult(["merge", "--abort"], { cwd: checkout });
    if (conflicted.length > 0) throw conflict(into, branch, conflicted);
    throw new DomainError("MERGE_FAILED", `git merge failed: ${(r.stderr || r.stdout).trim()}`);
  }
  return (await git(["rev-parse", "HEAD"], { cwd: checkout })).trim();
}

async function mergeWithoutCheckout(root: string, into: string, branch: string, head: string, message: string, env: NodeJS.ProcessEnv): Promise<string> {
  const old = (await git(["rev-parse", `refs/heads/${into}`], { cwd: root })).trim();
  const tree = await mergedTree(root, into, branch);
  const commit = (await git(["commit-tree", tree, "-p", old, "-p", head, "-m", message], { cwd: root, env })).trim();
  await git(["update-ref", `refs/heads/${into}`, commit, old], { cwd: root });
  return commit;
}

function conflict(into: string, branch: string, files: string[]): DomainError {
  return new DomainError("MERGE_CONFLICT", `Merging ${branch} into ${into} conflicts in ${files.join(", ")}: nothing was changed`, { kind: "CONFLICT", details: { files } });
}
