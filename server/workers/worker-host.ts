import { createHash } from "node:crypto";
import { existsSync } from "node:fs";
import { mkdir, rm } from "node:fs/promises";
import { join } from "node:path";
import type { CreateWorkspace, CreatedWorkspace, SessionRef, StartSession } from "../agents/agent-host";
import { git } from "../agents/git";
import { LocalAgentHost, serializeError } from "../agents/local-host";
import { REMOTE_GIT_TIMEOUT_MS } from "../agents/repo-mirrors";
import { parseRepoUrl } from "../agents/repo-url";
import { withRepoLock, type Workspace } from "../agents/workspace";
import { DomainError } from "../errors";
import { HOST_CALLS, type HostCall } from "../agents/loopback-host";
import { WORKSPACE_CALLS } from "./remote-host";

/** What a worker keeps out of its agents' environment: its own credentials, and what only the worker's git needs. */
const WORKER_ONLY = /^(SWITCHYARD_WORKER_TOKEN|SWITCHYARD_TOKEN|SWITCHYARD_URL|GIT_CONFIG_COUNT|GIT_CONFIG_KEY_\d+|GIT_CONFIG_VALUE_\d+|GIT_ASKPASS|NODE_OPTIONS|VITEST.*)$/;

/**
 * The worker's side of the session seam: its LocalAgentHost, with repositories as git URLs: the
 * server's (`<server>/git/<key>.git`, cloned into `<home>/repos/<key>`) or one given as a URL
 * (https://, ssh://, git://, user@host:path: cloned into `<home>/repos/url-<hash>` with this
 * machine's own git credentials; the server ships none). A clone has no checkout (only worktrees
 * are used) and is fetched before each new worktree; agents' branches go back with `git push
 * origin`: to the server, or to the URL. The agents' environment is this machine's (never the
 * worker's token) plus what the server sent.
 */
export class WorkerAgentHost {
  private readonly local: LocalAgentHost;

  constructor(
    private readonly opts: {
      home: string;
      /** This machine's environment, the base of its agents' (what only the worker needs is left out). */
      env: NodeJS.ProcessEnv;
      /** The server's URL as this machine reaches it: its repositories are under `/git/`. */
      serverUrl: string;
    },
  ) {
    this.local = new LocalAgentHost({ home: opts.home });
  }

  /** Where the clone of a repository URL (the server's, or another) lives on this machine. */
  clonePath(url: string): string {
    const base = `${this.opts.serverUrl.replace(/\/+$/, "")}/git/`;
    if (!url.startsWith(base)) {
      // only a URL git may be handed (never a path of this machine, an ext:: command...): REPO_URL_INVALID else
      if (parseRepoUrl(url) === null) throw new DomainError("REPO_URL_INVALID", `Not a git URL this worker clones: ${url}`);
      return join(this.opts.home, "repos", `url-${createHash("sha256").update(url).digest("hex").slice(0, 20)}`);
    }
    const key = /^([A-Za-z0-9_-]{1,64})\.git\/?$/.exec(url.slice(base.length))?.[1];
    if (!key) throw new DomainError("REPO_NOT_FOUND", `Not a repository URL of the server: ${url}`);
    return join(this.opts.home, "repos", key);
  }

  /**
   * Clone (first time) or fetch the server's branches (not agents' branches: this machine's may be
   * ahead); `branch`: also that agent branch as the server has it, when this clone has none.
   */
  async sync(url: string, branch?: string): Promise<string> {
    const path = this.clonePath(url);
    return withRepoLock(path, async () => {
      // this process's environment carries the server's auth header for git (worker-runtime.ts)
      // a remote that never answers fails the agent's start rather than hang it
      const timeoutMs = REMOTE_GIT_TIMEOUT_MS;
      if (!existsSync(join(path, ".git"))) {
        await mkdir(join(this.opts.home, "repos"), { recursive: true });
        await rm(path, { recursive: true, force: true });
        await git(["clone", "--quiet", "--no-checkout", "--", url, path], { cwd: this.opts.home, timeoutMs });
      }
      await git(["fetch", "--quiet", "--update-head-ok", "origin", "+refs/heads/*:refs/heads/*", "^refs/heads/switchyard/*", "+refs/tags/*:refs/tags/*"], { cwd: path, timeoutMs });
      if (branch) {
        const here = await git(["rev-parse", "--verify", "--quiet", `refs/heads/${branch}`], { cwd: path }).then(
          () => true,
          () => false,
        );
        // the server may not have it (never pushed): the worktree then starts from its base
        if (!here) await git(["fetch", "--quiet", "origin", `refs/heads/${branch}:refs/heads/${branch}`], { cwd: path }).catch(() => undefined);
      }
      return path;
    });
  }

  /** The calls of the seam, by name (what the server sends). */
  async call(name: string, args: unknown[]): Promise<unknown> {
    if (!(HOST_CALLS as readonly string[]).includes(name)) {
      throw new DomainError("COMMAND_UNKNOWN", `This worker does not know the call "${name}" (run the same Switchyard version as the server)`);
    }
    const call = name as HostCall;
    if (call === "createWorkspace") return this.createWorkspace(args[0] as CreateWorkspace);
    if (call === "startSession") return this.startSession(args[0] as StartSession);
    const fn = this.local[call] as (...a: unknown[]) => Promise<unknown>;
    if (!WORKSPACE_CALLS.has(call)) return fn.apply(this.local, args);
    const ws = args[0] as Workspace;
    // a worktree made again here (an agent moved from a lost worker): the clone, and its branch as pushed
    if (call === "restoreWorktree" && ws.repoRoot) await this.sync(ws.repoRoot, ws.branch ?? undefined);
    return fn.call(this.local, this.localWs(ws), ...args.slice(1));
  }

  private async createWorkspace(req: CreateWorkspace): Promise<CreatedWorkspace> {
    let repo: string;
    try {
      repo = await this.sync(req.repo);
    } catch (err) {
      return { ok: false, error: serializeError(new DomainError("REPO_UNREACHABLE", `This worker could not get ${req.repo}: ${(err as Error).message}`, { kind: "CONFLICT" })), setup: [] };
    }
    return this.local.createWorkspace({ ...req, repo });
  }

  private startSession(req: StartSession): Promise<SessionRef> {
    const env: Record<string, string> = {};
    const unset = new Set(req.unset ?? []);
    for (const [k, v] of Object.entries(this.opts.env)) if (v !== undefined && !WORKER_ONLY.test(k) && !unset.has(k)) env[k] = v;
    Object.assign(env, req.env);
    // the server's PATH entries (the yard shim) first, then this machine's
    env.PATH = [req.env.PATH, this.opts.env.PATH].filter(Boolean).join(":");
    const { unset: _unset, ...rest } = req;
    return this.local.startSession({ ...rest, env });
  }

  /** A workspace as the server names it (its repository a URL) as it is here. */
  private localWs(ws: Workspace): Workspace {
    return { ...ws, repoRoot: ws.repoRoot === null ? null : this.clonePath(ws.repoRoot) };
  }
}
