import type { AgentMode, AgentSignal } from "../../shared/agents";
import { DomainError } from "../errors";
import type { LaunchSpec, WorktreeGit } from "./providers/types";
import type { FileChange } from "../../shared/agents";
import type { CommitIdentity, Workspace } from "./workspace";

/**
 * The session seam: everything that touches the machine an agent runs on (its CLI's process, its
 * output files, its worktree) goes through one `AgentHost`. Every argument and result is plain
 * JSON, so the host can be this process (`LocalAgentHost`), a JSON round trip of it in tests
 * (`LoopbackAgentHost`) or, later, a worker on another machine. Thrown errors cross it as
 * `SerializedError` and come back as the same `DomainError` (code, kind, details).
 */

/** A process run of an agent, as the host started it: enough to re-attach after a restart. */
export interface SessionRef {
  agentId: string;
  /** 1, 2, ... : the n-th process run of the agent. */
  session: number;
  pid: number;
  /** The process's start time (from /proc) so a reused PID is not mistaken for it; null where unknown. */
  startTime: string | null;
  /** The host's folder of the agent: `session-<n>.jsonl`, `.stderr.log` and `.exit` live there. */
  dir: string;
}

export interface StartSession {
  agentId: string;
  session: number;
  dir: string;
  command: string;
  args: string[];
  cwd: string;
  env: Record<string, string>;
  /** Variables the host's own environment must not give the process (a worker merges its environment under `env`). */
  unset?: string[];
}

export interface SessionState {
  running: boolean;
  /** What the process exited with (128 + n for a signal), null while it runs or when unknown. */
  exitCode: number | null;
}

export interface OutputChunk {
  /** The bytes read, base64: output is read by byte offset and may end inside a character. */
  data: string;
  /** Where `data` starts. */
  offset: number;
  /** The file's size when read (0 when it does not exist yet). */
  size: number;
}

export interface ReadOutput {
  stream: "stdout" | "stderr";
  /** A byte offset; negative: that many bytes before the end. */
  offset: number;
  maxBytes: number;
}

export interface InputFilesRequest {
  agentId: string;
  alias: string;
  mode: AgentMode;
  task: string;
  provider: string;
}

export interface CreateWorkspace {
  worktreesDir: string;
  alias: string;
  repo: string;
  baseRef?: string;
  init?: boolean;
}

export interface SetupLine {
  line: string;
  stream: "stdout" | "stderr";
}

export type CreatedWorkspace = { ok: true; workspace: Workspace; setup: SetupLine[] } | { ok: false; error: SerializedError; setup: SetupLine[] };

export interface WorkspaceChanges {
  dirty: boolean;
  files: FileChange[];
  insertions: number;
  deletions: number;
  commitsAhead: number;
}

export interface ConfigFile {
  path: string;
  content: string;
}

export interface SerializedError {
  name: string;
  message: string;
  code?: string;
  kind?: string;
  details?: unknown;
}

export interface AgentHost {
  /** "local" for this process; a worker's name for a worker's. */
  readonly name: string;
  /** Its data dir: agents' folders (`agents/<id>`) and worktrees (`worktrees/`) live under it. */
  readonly home: string;
  /** The server's URL as agents on this host reach it; absent: the server's own (this machine). */
  readonly serverUrl?: string;
  /** A provider's CLI as the host found it (a worker reports them when it connects); absent: resolved on this machine. */
  providerCommand?(provider: string): string | null;
  /** Told when a session's stdout grew (a worker's notice); the host is polled without it. Returns the unsubscribe. */
  onOutput?(ref: SessionRef, listener: () => void): () => void;

  // the CLI's process
  /** Start a detached process run; its stdout, stderr and exit code go to files in `dir`. */
  startSession(req: StartSession): Promise<SessionRef>;
  /** Is it still running, and what did it exit with (also after a restart of the server). */
  sessionState(ref: SessionRef): Promise<SessionState>;
  /** Waits up to `timeoutMs` for the process to end; the state either way. */
  waitForExit(ref: SessionRef, opts: { timeoutMs: number }): Promise<SessionState>;
  /** SIGTERM to its process group, SIGKILL after `graceMs`. */
  stopSession(ref: SessionRef, opts: { graceMs: number }): Promise<void>;
  readOutput(ref: SessionRef, req: ReadOutput): Promise<OutputChunk>;

  // what a launch needs on the host
  /** The provider's files for a run (its config dir), and where the `yard` shim is: the PATH entry agents get. */
  prepareLaunch(req: { provider: string; spec: LaunchSpec }): Promise<{ binDir: string }>;
  /** Copy a session's files between two config dirs (an account switch); how many were copied. */
  copySession(req: { provider: string; fromDir: string; toDir: string; sessionId: string }): Promise<number>;
  /**
   * Write files into a config dir (an account's credential for one run on a worker): paths
   * relative to `dir`, mode 0600; a JSON object file that exists gets the given top-level keys
   * merged into it (the CLI's own state in it stays).
   */
  writeConfigFiles(dir: string, files: ConfigFile[]): Promise<void>;
  /** Files of an agent's config dir (paths inside it), as text; the ones that do not exist are left out. */
  readConfigFiles(dir: string, paths: string[]): Promise<ConfigFile[]>;
  /** Remove an agent's folder (its session files). */
  removeAgentDir(dir: string): Promise<void>;

  // the agent's own files in its workspace
  writeInputFiles(workspace: string, input: InputFilesRequest): Promise<void>;
  readSignal(workspace: string): Promise<{ signal: AgentSignal } | { error: string } | null>;
  signalWritten(workspace: string): Promise<boolean>;
  clearSignal(workspace: string): Promise<void>;

  // the workspace (a git worktree)
  createWorkspace(req: CreateWorkspace): Promise<CreatedWorkspace>;
  workspaceExists(path: string): Promise<boolean>;
  removeWorkspace(ws: Workspace, opts: { force?: boolean; deleteBranch?: boolean }): Promise<void>;
  restoreWorktree(ws: Workspace): Promise<void>;
  /** Copy a worktree's files (not its `.git`) to `target`, before a removal in debug mode. */
  archiveWorkspace(ws: Workspace, target: string): Promise<void>;
  /** `git worktree prune` in a repository. */
  pruneWorktrees(repo: string): Promise<void>;
  /** Uncommitted paths (the status), `.switchyard/` left out. */
  dirtyFiles(ws: Workspace): Promise<string[]>;
  changes(ws: Workspace): Promise<WorkspaceChanges>;
  diff(ws: Workspace, opts: { maxBytes?: number }): Promise<{ patch: string; truncated: boolean }>;
  summary(ws: Workspace, opts: { maxBytes: number }): Promise<WorkspaceChanges & { patch: string; truncated: boolean }>;
  /** The commit check: commits on the branch beyond its base. */
  commitsAhead(ws: Workspace): Promise<number>;
  /** Commits on the branch since `head` (null when unknown). */
  commitsSince(ws: Workspace, head: string | null): Promise<number | null>;
  commitWorktree(ws: Workspace, opts: { message: string; author: CommitIdentity }): Promise<{ commit: string; files: string[] }>;
  /** Push the workspace's branch to a remote (URL or name), as `ref` there (default: the same name). */
  push(ws: Workspace, opts: { remote: string; ref?: string }): Promise<{ commit: string }>;
  /** Where a commit in the worktree writes (for a sandboxed CLI's writable roots). */
  worktreeGit(path: string, branch: string): Promise<WorktreeGit>;
  diskUsage(path: string): Promise<number>;
}

/**
 * The hosts agents run on: this machine's, and each worker's (`yard worker`). An agent's row says
 * which (`worker`, null for this machine).
 */
export interface AgentHosts {
  readonly local: AgentHost;
  /** The host of an agent; for a worker not connected to this server, one whose calls fail with WORKER_UNREACHABLE. */
  of(agent: { worker: string | null }): AgentHost;
  /** Whether calls to the agent's host can succeed from this server now (its worker is connected here). */
  reachable(agent: { worker: string | null }): boolean;
}

/** Only this machine: no workers (tests, and servers built without the workers service). */
export function localHosts(local: AgentHost): AgentHosts {
  return {
    local,
    of: (agent) => {
      if (agent.worker !== null) throw new DomainError("WORKER_UNREACHABLE", `Worker ${agent.worker} is not connected to this server`, { kind: "CONFLICT" });
      return local;
    },
    reachable: (agent) => agent.worker === null,
  };
}
