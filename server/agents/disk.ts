import { lstat, readdir } from "node:fs/promises";
import { join } from "node:path";
import { gitResult } from "./git";

/** Bytes used under a directory (files and symlinks themselves, not followed); `.git` is a file in a worktree. */
export async function diskUsage(dir: string): Promise<number> {
  let total = 0;
  const stack = [dir];
  while (stack.length > 0) {
    const current = stack.pop()!;
    let entries;
    try {
      entries = await readdir(current, { withFileTypes: true });
    } catch {
      continue;
    }
    for (const e of entries) {
      const path = join(current, e.name);
      if (e.isDirectory()) stack.push(path);
      else total += (await lstat(path).catch(() => null))?.size ?? 0;
    }
  }
  return total;
}

/** Whether `branch` (a local branch name, or any commit with `commit`) is fully contained in `into`, so removing its worktree loses nothing. */
export async function isMergedInto(repo: string, branch: string, into: string, opts: { commit?: boolean } = {}): Promise<boolean> {
  const r = await gitResult(["merge-base", "--is-ancestor", opts.commit ? branch : `refs/heads/${branch}`, into], { cwd: repo });
  return r.code === 0;
}
