import { createHash } from "node:crypto";
import { existsSync, readFileSync } from "node:fs";
import { mkdir, rename, rm, writeFile } from "node:fs/promises";
import { basename, dirname, join } from "node:path";
import { DomainError } from "../errors";
import { git } from "./git";
import { withRepoLock } from "./workspace";

/**
 * Repositories given as git URLs (docs/SCALING.md "Repositories travel by git"): the server keeps
 * a bare mirror of each at `<home>/mirrors/<key>.git` (its branches and tags, fetched from the
 * URL), so changes, diff, merge and the sweep work on it as on a repository of this machine. An
 * agent's row names the mirror as its repository; the URL is in the mirror (`switchyard-url`).
 * The server's git never prompts and gives up after REMOTE_GIT_TIMEOUT_MS; its credentials for
 * the URL are this machine's own (a credential helper, an ssh key): Switchyard stores none.
 */

/** How long a clone, fetch or push of a URL may take before it is stopped (a remote that never answers). */
export const REMOTE_GIT_TIMEOUT_MS = 120_000;
/** The file in a mirror that holds its URL, as given. */
const URL_FILE = "switchyard-url";
/** Agents' branches: a mirror fetches them one at a time (a local agent's is this machine's own). */
const AGENT_BRANCHES = "refs/heads/switchyard/*";

const remoteEnv = (): NodeJS.ProcessEnv => ({ ...process.env, GIT_TERMINAL_PROMPT: "0" });

/** The mirror of a URL: pure in the URL as given. */
export function mirrorPathOf(home: string, url: string): string {
  return join(home, "mirrors", `${createHash("sha256").update(url).digest("hex").slice(0, 20)}.git`);
}

const urls = new Map<string, string>();

/** The URL a repository path mirrors, or null for a repository of this machine. */
export function mirrorUrlOf(repoPath: string | null): string | null {
  if (!repoPath || basename(dirname(repoPath)) !== "mirrors" || !/^[0-9a-f]{20}\.git$/.test(basename(repoPath))) return null;
  const known = urls.get(repoPath);
  if (known) return known;
  try {
    const url = readFileSync(join(repoPath, URL_FILE), "utf8").trim();
    urls.set(repoPath, url);
    return url;
  } catch {
    return null;
  }
}

function unreachable(url: string, err: unknown, what = "fetch"): DomainError {
  const msg = err instanceof Error ? err.message : String(err);
  return new DomainError("REPO_UNREACHABLE", `The server could not ${what} ${url}: ${msg}`, { kind: "CONFLICT", details: { repo: url }, cause: err });
}

/**
 * The mirror of `url`, cloned on first use, else fetched (its branches and tags, agents' branches
 * left out), with its HEAD on the remote's default branch: an agent's base when none is given.
 * REPO_UNREACHABLE when git cannot reach it; a failed first clone leaves nothing behind.
 */
export async function ensureMirror(home: string, url: string): Promise<string> {
  const path = mirrorPathOf(home, url);
  return withRepoLock(path, async () => {
    if (existsSync(join(path, URL_FILE))) {
      await fetchHeads(path, url);
      return path;
    }
    const tmp = `${path}.tmp-${process.pid}-${Date.now()}`;
    try {
      await mkdir(dirname(path), { recursive: true });
      await git(["init", "--bare", "--quiet", tmp], { cwd: dirname(path) });
      await git(["config", "remote.origin.url", url], { cwd: tmp });
      await writeFile(join(tmp, URL_FILE), `${url}\n`);
      await fetchHeads(tmp, url);
      await rm(path, { recursive: true, force: true });
      await rename(tmp, path);
    } finally {
      await rm(tmp, { recursive: true, force: true });
    }
    urls.set(path, url);
    return path;
  });
}

/** Branches (not agents') and tags from the URL, forced (the remote is the truth); HEAD follows its default branch. */
async function fetchHeads(path: string, url: string): Promise<void> {
  const opts = { cwd: path, env: remoteEnv(), timeoutMs: REMOTE_GIT_TIMEOUT_MS };
  let head: string;
  try {
    head = await git(["ls-remote", "--symref", "origin", "HEAD"], opts);
    await git(["fetch", "--quiet", "origin", "+refs/heads/*:refs/heads/*", `^${AGENT_BRANCHES}`, "+refs/tags/*:refs/tags/*"], opts);
  } catch (err) {
    throw unreachable(url, err);
  }
  const branch = /^ref: refs\/heads\/(\S+)\tHEAD$/m.exec(head)?.[1];
  if (branch) await git(["symbolic-ref", "HEAD", `refs/heads/${branch}`], { cwd: path });
}

/** The remote's default branch as the mirror last saw it (its HEAD), or undefined when the remote has none (empty). */
export async function defaultBranchOf(mirror: string): Promise<string | undefined> {
  const branch = (await git(["symbolic-ref", "--quiet", "--short", "HEAD"], { cwd: mirror }).catch(() => "")).trim();
  return branch && (await git(["rev-parse", "--verify", "--quiet", `refs/heads/${branch}`], { cwd: mirror }).then(() => true, () => false)) ? branch : undefined;
}

/**
 * An agent's branch as its worker pushed it to the URL, into the mirror (forced: the worker's is
 * the truth). A branch the remote does not have (never pushed) is not an error.
 */
export async function fetchAgentBranch(mirror: string, branch: string): Promise<void> {
  const url = mirrorUrlOf(mirror) ?? mirror;
  await withRepoLock(mirror, async () => {
    const r = await gitResultWithTimeout(["fetch", "--quiet", "origin", `+refs/heads/${branch}:refs/heads/${branch}`], mirror);
    if (r.code !== 0 && !/couldn't find remote ref/i.test(r.stderr)) throw unreachable(url, new Error(r.stderr.trim() || `git fetch exited with ${r.code}`));
  });
}

/** The mirror's branches fetched again (before a merge: it lands on the remote's tip). */
export async function refreshMirror(mirror: string): Promise<void> {
  const url = mirrorUrlOf(mirror);
  if (!url) return;
  await withRepoLock(mirror, () => fetchHeads(mirror, url));
}

/**
 * A merge made in the mirror goes to the URL: `into` pushed without force, so the remote takes it
 * only as a fast-forward of what it has. Refused (or failing), the merge is undone in the mirror
 * (compare-and-swap back to `old`) and MERGE_PUSH_FAILED says why; nothing changed on the remote.
 */
export async function pushMerge(mirror: string, r: { into: string; commit: string; old: string }): Promise<void> {
  const url = mirrorUrlOf(mirror) ?? mirror;
  const pushed = await gitResultWithTimeout(["push", "--quiet", "origin", `${r.commit}:refs/heads/${r.into}`], mirror);
  if (pushed.code === 0) return;
  await git(["update-ref", `refs/heads/${r.into}`, r.old, r.commit], { cwd: mirror }).catch(() => undefined);
  const said = pushed.stderr.trim();
  const moved = /non-fast-forward|fetch first|\[rejected\]/.test(said);
  const why = moved ? `${r.into} on ${url} moved since the server fetched it (someone pushed meanwhile): merge again to merge onto its new tip` : `pushing ${r.into} to ${url} failed: ${said || `git push exited with ${pushed.code}`}`;
  throw new DomainError("MERGE_PUSH_FAILED", `${why}. Nothing changed on the remote; the merge was undone in the server's mirror`, { kind: "CONFLICT", details: { repo: url, into: r.into } });
}

async function gitResultWithTimeout(args: string[], cwd: string): Promise<{ code: number; stdout: string; stderr: string }> {
  try {
    return { code: 0, stdout: await git(args, { cwd, env: remoteEnv(), timeoutMs: REMOTE_GIT_TIMEOUT_MS }), stderr: "" };
  } catch (err) {
    const e = err as Error & { stderr?: string; exitCode?: number };
    return { code: typeof e.exitCode === "number" ? e.exitCode : 128, stdout: "", stderr: e.stderr ?? e.message };
  }
}
