import { git } from "../agents/git";

/** What a repository of this server has checked out: its branch's name, or the commit (a detached HEAD). */
export async function headOfRepo(repoPath: string): Promise<string> {
  const branch = await git(["symbolic-ref", "--quiet", "--short", "HEAD"], { cwd: repoPath }).catch(() => "");
  if (branch.trim()) return branch.trim();
  return (await git(["rev-parse", "--verify", "HEAD^{commit}"], { cwd: repoPath })).trim();
}
