import type { AgentHost, CreateWorkspace, SessionRef } from "../agents/agent-host";
import { HOST_CALLS, type HostCall } from "../agents/loopback-host";
import type { Workspace } from "../agents/workspace";
import { DomainError } from "../errors";
import type { WorkerCapabilities } from "../../shared/workers";
import type { WorkerLink } from "./worker-link";

export interface RemoteHostDeps {
  name: string;
  /** The worker's connection now (undefined while it is not connected to this server). */
  link(): WorkerLink | undefined;
  /** What it reported when it last connected. */
  capabilities(): WorkerCapabilities;
  /**
   * The git URL a worker clones a repository from, and pushes agents' branches to: this server's
   * `/git/<key>.git`, or for a repository given as a URL (its mirror here), that URL.
   */
  repoUrl(repoPath: string): string;
  /** The branch (or commit) a repository of this server has checked out: a worker's base when none is asked for. */
  headOf(repoPath: string): Promise<string>;
  /** Output notices of the worker, whichever connection it is on. */
  onOutput(listener: (agentId: string, session: number) => void): () => void;
}

/** Calls that take a Workspace first: its repository crosses the wire as the git URL the worker clones (worker-host.ts maps it back). */
export const WORKSPACE_CALLS: ReadonlySet<HostCall> = new Set<HostCall>([
  "removeWorkspace",
  "restoreWorktree",
  "archiveWorkspace",
  "dirtyFiles",
  "changes",
  "diff",
  "summary",
  "commitsAhead",
  "commitsSince",
  "commitWorktree",
  "push",
]);

/** How long past its own timeout a long-polling call may take. */
const LONG_POLL_SLACK_MS = 15_000;

/**
 * A worker's machine as an AgentHost: every call of the session seam goes over the worker's
 * WebSocket (worker-link.ts) and runs there on its LocalAgentHost. Repositories of this server
 * travel as git URLs (the worker keeps a clone); `home` and `serverUrl` are the worker's.
 * One per worker name, across its reconnections: an agent's session keeps working after a blip.
 */
export function remoteHost(deps: RemoteHostDeps): AgentHost {
  const call = async (name: HostCall, args: unknown[], timeoutMs?: number): Promise<unknown> => {
    const link = deps.link();
    if (!link) throw new DomainError("WORKER_UNREACHABLE", `Worker ${deps.name} is not connected to this server`, { kind: "CONFLICT" });
    return link.call(name, args, timeoutMs);
  };
  const wire = (ws: Workspace): Workspace => ({ ...ws, repoRoot: ws.repoRoot === null ? null : deps.repoUrl(ws.repoRoot) });
  const host: Record<string, unknown> = {
    name: deps.name,
    get home() {
      return deps.capabilities().home;
    },
    get serverUrl() {
      return deps.capabilities().serverUrl;
    },
    providerCommand: (provider: string) => deps.capabilities().providers.find((p) => p.name === provider)?.command ?? null,
    onOutput: (ref: SessionRef, listener: () => void) => deps.onOutput((agentId, session) => agentId === ref.agentId && session === ref.session && listener()),
  };
  for (const name of HOST_CALLS) {
    host[name] = (...args: unknown[]) => {
      if (WORKSPACE_CALLS.has(name)) return call(name, [wire(args[0] as Workspace), ...args.slice(1)]);
      if (name === "waitForExit") return call(name, args, (args[1] as { timeoutMs: number }).timeoutMs + LONG_POLL_SLACK_MS);
      return call(name, args);
    };
  }
  host.createWorkspace = async (req: CreateWorkspace) => {
    if (req.init) throw new DomainError("REPO_NOT_GIT", `${req.repo} is not a git repository: make it one on the server (spawn with init on this machine) before an agent on a worker works on it`);
    // the worker's clone has no "current branch" of ours: it gets the one checked out here
    const baseRef = req.baseRef ?? (await deps.headOf(req.repo));
    return call("createWorkspace", [{ ...req, repo: deps.repoUrl(req.repo), baseRef }]);
  };
  // worktree metadata of this server's repositories is this server's to prune
  host.pruneWorktrees = async () => undefined;
  return host as unknown as AgentHost;
}
