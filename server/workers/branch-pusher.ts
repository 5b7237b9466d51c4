import { readFile, stat } from "node:fs/promises";
import { isAbsolute, join } from "node:path";
import { git } from "../agents/git";
import { REMOTE_GIT_TIMEOUT_MS } from "../agents/repo-mirrors";

/** A running agent's worktree whose branch is pushed when it moves. */
interface Watched {
  cwd: string;
  /** `refs/heads/switchyard/<alias>`, once known. */
  ref: string | null;
  /** The loose ref file of that branch in the repository's common git dir. */
  refFile: string | null;
  /** The commit last pushed (or found at the start: nothing new to push). */
  pushed: string | null;
  /** The ref file's mtime when last read: unchanged, nothing to read. */
  seenMtime: number;
  /** A failed push is tried again no sooner than this. */
  retryAt: number;
  busy: boolean;
}

/** A push that failed is tried again after this long (a new commit tries at once). */
const RETRY_MS = 10_000;

/**
 * The worker pushes an agent's branch when the agent commits, not only when its run ends: what it
 * committed reaches the server's repository within a tick, so the work outlives this machine even
 * if it dies mid-run. Each tick stats the branch's loose ref file (no git process while nothing
 * moved); a moved branch is pushed with `git push origin <commit>:<ref>` (never forced). The
 * server fences the push: only the branch of an agent placed on this worker and not interrupted.
 */
export class BranchPusher {
  private readonly watched = new Map<string, Watched>();

  constructor(private readonly opts: { log(line: string): void; onPushed?(key: string, commit: string): void }) {}

  /** Start watching a session's worktree (keyed as the worker keys its sessions). */
  watch(key: string, cwd: string): void {
    if (this.watched.has(key)) return;
    const w: Watched = { cwd, ref: null, refFile: null, pushed: null, seenMtime: 0, retryAt: 0, busy: true };
    this.watched.set(key, w);
    void this.locate(w).finally(() => (w.busy = false));
  }

  forget(key: string): void {
    this.watched.delete(key);
  }

  /** One pass over the watched branches; resolves when the pushes it started are done. */
  async tick(): Promise<void> {
    await Promise.all([...this.watched.entries()].map(([key, w]) => this.check(key, w)));
  }

  private async locate(w: Watched): Promise<void> {
    try {
      const ref = (await git(["symbolic-ref", "--quiet", "HEAD"], { cwd: w.cwd })).trim();
      if (!ref.startsWith("refs/heads/switchyard/")) return;
      const common = (await git(["rev-parse", "--git-common-dir"], { cwd: w.cwd })).trim();
      w.ref = ref;
      w.refFile = join(isAbsolute(common) ? common : join(w.cwd, common), ref);
      w.pushed = await this.tipOf(w);
    } catch {
      // not a worktree of ours (a folder workspace): nothing to push
    }
  }

  private async check(key: string, w: Watched): Promise<void> {
    if (w.busy || !w.ref || !w.refFile) return;
    w.busy = true;
    try {
      const mtime = await stat(w.refFile).then(
        (s) => s.mtimeMs,
        () => -1,
      );
      // a packed ref (no loose file) is read through git every tick; a loose one only when it
      // changed, or when a failed push is due to be tried again
      const moved = mtime === -1 || mtime !== w.seenMtime;
      if (!moved && (w.retryAt === 0 || Date.now() < w.retryAt)) return;
      w.seenMtime = mtime;
      const tip = await this.tipOf(w);
      if (!tip || tip === w.pushed) return;
      try {
        // a remote that never answers (a URL repository) is given up on, and tried again later
        await git(["push", "--quiet", "origin", `${tip}:${w.ref}`], { cwd: w.cwd, timeoutMs: REMOTE_GIT_TIMEOUT_MS });
        w.pushed = tip;
        w.retryAt = 0;
        this.opts.onPushed?.(key, tip);
      } catch (err) {
        w.retryAt = Date.now() + RETRY_MS;
        this.opts.log(`pushing ${w.ref.slice("refs/heads/".length)} failed (trying again on its next commit or in ${RETRY_MS / 1000} s): ${(err as Error).message.split("\n")[0]}`);
      }
    } finally {
      w.busy = false;
    }
  }

  private async tipOf(w: Watched): Promise<string | null> {
    const loose = await readFile(w.refFile!, "utf8").then(
      (t) => t.trim(),
      () => null,
    );
    if (loose && /^[0-9a-f]{40,64}$/.test(loose)) return loose;
    return git(["rev-parse", "--verify", "--quiet", w.ref!], { cwd: w.cwd }).then(
      (t) => t.trim() || null,
      () => null,
    );
  }
}
