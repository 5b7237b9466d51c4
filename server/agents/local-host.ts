import { cp, mkdir, open, readFile, rm, writeFile } from "node:fs/promises";
import { existsSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { isDomainError, DomainError } from "../errors";
import { isErrorCode } from "../../shared/errors";
import type { AgentHost, ConfigFile, CreateWorkspace, CreatedWorkspace, OutputChunk, ReadOutput, SerializedError, SessionRef, SessionState, SetupLine, StartSession } from "./agent-host";
import { ensureYardShim } from "./agent-env";
import { isAlive, killGroup, readExitCode, spawnDetached } from "./agent-process";
import { diskUsage } from "./disk";
import { git } from "./git";
import { clearSignal, readSignal, signalPathOf, writeInputFiles } from "./input-files";
import { commitsSince } from "./merge";
import { getProvider } from "./providers";
import type { LaunchSpec } from "./providers/types";
import {
  commitsAhead,
  commitWorktree,
  createWorkspace,
  dirtyFiles,
  removeWorkspace,
  restoreWorktree,
  withRepoLock,
  workspaceChanges,
  workspaceDiff,
  workspaceSummary,
  worktreeGit,
  type Workspace,
} from "./workspace";

/** The files of a process run, in the agent's folder on the host. */
export function sessionPaths(dir: string, session: number) {
  return {
    stdout: join(dir, `session-${session}.jsonl`),
    stderr: join(dir, `session-${session}.stderr.log`),
    exitCode: join(dir, `session-${session}.exit`),
  };
}

/**
 * The agent host of this process: detached local children, files on this disk, git worktrees of
 * local repositories. While this process is a child's parent its exit is seen at once; after a
 * restart liveness is polled (PID plus start time).
 */
export class LocalAgentHost implements AgentHost {
  readonly name = "local";
  /** The children this process started (keyed by pid:startTime): their exit, and its code once known. */
  private readonly children = new Map<string, { exited: Promise<number | null>; code?: number | null }>();
  /** Where the `yard` shim is: written once per host, not at every launch. */
  private binDir: string | undefined;

  constructor(private readonly opts: { home: string; pollMs?: number }) {}

  get home(): string {
    return this.opts.home;
  }

  async startSession(req: StartSession): Promise<SessionRef> {
    await mkdir(req.dir, { recursive: true });
    const paths = sessionPaths(req.dir, req.session);
    const proc = spawnDetached({ command: req.command, args: req.args, cwd: req.cwd, env: req.env, stdoutPath: paths.stdout, stderrPath: paths.stderr, exitCodePath: paths.exitCode });
    const ref: SessionRef = { agentId: req.agentId, session: req.session, pid: proc.pid, startTime: proc.startTime, dir: req.dir };
    const key = keyOf(ref);
    const child: { exited: Promise<number | null>; code?: number | null } = { exited: proc.exited };
    this.children.set(key, child);
    void proc.exited.then((code) => {
      child.code = code;
      // forgotten a while after the exit: a late sessionState() still finds the code in the file
      setTimeout(() => this.children.delete(key), 60_000).unref();
    });
    return ref;
  }

  async sessionState(ref: SessionRef): Promise<SessionState> {
    const recorded = readExitCode(sessionPaths(ref.dir, ref.session).exitCode);
    if (recorded !== null) return { running: isAlive(ref.pid, ref.startTime), exitCode: recorded };
    const child = this.children.get(keyOf(ref));
    if (child && child.code !== undefined) return { running: false, exitCode: child.code };
    return { running: isAlive(ref.pid, ref.startTime), exitCode: null };
  }

  async waitForExit(ref: SessionRef, opts: { timeoutMs: number }): Promise<SessionState> {
    const deadline = Date.now() + opts.timeoutMs;
    const exited = this.children.get(keyOf(ref))?.exited;
    const pollMs = Math.min(this.opts.pollMs ?? 500, 200);
    for (;;) {
      const state = await this.sessionState(ref);
      if (!state.running) return state;
      const left = deadline - Date.now();
      if (left <= 0) return state;
      await Promise.race([sleep(Math.min(left, exited ? left : pollMs)), ...(exited ? [exited] : [])]);
    }
  }

  async stopSession(ref: SessionRef, opts: { graceMs: number }): Promise<void> {
    await killGroup(ref.pid, ref.startTime, opts.graceMs);
  }

  async readOutput(ref: SessionRef, req: ReadOutput): Promise<OutputChunk> {
    const paths = sessionPaths(ref.dir, ref.session);
    let handle;
    try {
      handle = await open(req.stream === "stdout" ? paths.stdout : paths.stderr, "r");
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === "ENOENT") return { data: "", offset: Math.max(0, req.offset), size: 0 };
      throw err;
    }
    try {
      const { size } = await handle.stat();
      const offset = req.offset < 0 ? Math.max(0, size + req.offset) : req.offset;
      const length = Math.max(0, Math.min(req.maxBytes, size - offset));
      const buf = Buffer.allocUnsafe(length);
      const { bytesRead } = length > 0 ? await handle.read(buf, 0, length, offset) : { bytesRead: 0 };
      return { data: buf.subarray(0, bytesRead).toString("base64"), offset, size };
    } finally {
      await handle.close();
    }
  }

  async prepareLaunch(req: { provider: string; spec: LaunchSpec }): Promise<{ binDir: string }> {
    await mkdir(req.spec.configDir, { recursive: true });
    await getProvider(req.provider).prepare?.(req.spec);
    this.binDir ??= ensureYardShim(this.opts.home);
    return { binDir: this.binDir };
  }

  async copySession(req: { provider: string; fromDir: string; toDir: string; sessionId: string }): Promise<number> {
    return (await getProvider(req.provider).accounts?.copySession(req.fromDir, req.toDir, req.sessionId)) ?? 0;
  }

  async readConfigFiles(dir: string, paths: string[]): Promise<ConfigFile[]> {
    const root = resolve(dir);
    const out: ConfigFile[] = [];
    for (const p of paths) {
      const path = resolve(root, p);
      if (!path.startsWith(`${root}/`)) throw new DomainError("BAD_INPUT", `A config file must stay inside ${root}: ${p}`);
      const content = await readFile(path, "utf8").catch(() => null);
      if (content !== null) out.push({ path: p, content });
    }
    return out;
  }

  async writeConfigFiles(dir: string, files: ConfigFile[]): Promise<void> {
    const root = resolve(dir);
    for (const f of files) {
      const path = resolve(root, f.path);
      if (!path.startsWith(`${root}/`)) throw new DomainError("BAD_INPUT", `A config file must stay inside ${root}: ${f.path}`);
      await mkdir(dirname(path), { recursive: true, mode: 0o700 });
      let content = f.content;
      if (path.endsWith(".json") && existsSync(path)) {
        try {
          const current = JSON.parse(await readFile(path, "utf8")) as unknown;
          const next = JSON.parse(f.content) as unknown;
          if (isObject(current) && isObject(next)) content = JSON.stringify({ ...current, ...next }, null, 2);
        } catch {
          // not JSON there: replaced
        }
      }
      await writeFile(path, content, { mode: 0o600 });
    }
  }

  async removeAgentDir(dir: string): Promise<void> {
    await rm(dir, { recursive: true, force: true });
  }

  async writeInputFiles(workspace: string, input: Parameters<AgentHost["writeInputFiles"]>[1]): Promise<void> {
    await writeInputFiles(workspace, input);
  }

  readSignal(workspace: string) {
    return readSignal(workspace);
  }

  async signalWritten(workspace: string): Promise<boolean> {
    return existsSync(signalPathOf(workspace));
  }

  clearSignal(workspace: string): Promise<void> {
    return clearSignal(workspace);
  }

  async createWorkspace(req: CreateWorkspace): Promise<CreatedWorkspace> {
    const setup: SetupLine[] = [];
    try {
      const workspace = await createWorkspace({ ...req, onSetupOutput: (line, stream) => setup.push({ line, stream }) });
      return { ok: true, workspace, setup };
    } catch (err) {
      return { ok: false, error: serializeError(err), setup };
    }
  }

  async workspaceExists(path: string): Promise<boolean> {
    return existsSync(path);
  }

  removeWorkspace(ws: Workspace, opts: { force?: boolean; deleteBranch?: boolean }): Promise<void> {
    return removeWorkspace(ws, opts);
  }

  restoreWorktree(ws: Workspace): Promise<void> {
    return restoreWorktree(ws);
  }

  async archiveWorkspace(ws: Workspace, target: string): Promise<void> {
    await cp(ws.path, target, { recursive: true, filter: (src) => src !== join(ws.path, ".git") });
  }

  async pruneWorktrees(repo: string): Promise<void> {
    await withRepoLock(repo, () => git(["worktree", "prune"], { cwd: repo }));
  }

  dirtyFiles(ws: Workspace): Promise<string[]> {
    return dirtyFiles(ws);
  }

  changes(ws: Workspace) {
    return workspaceChanges(ws);
  }

  diff(ws: Workspace, opts: { maxBytes?: number }) {
    return workspaceDiff(ws, opts);
  }

  summary(ws: Workspace, opts: { maxBytes: number }) {
    return workspaceSummary(ws, opts);
  }

  commitsAhead(ws: Workspace): Promise<number> {
    return commitsAhead(ws);
  }

  commitsSince(ws: Workspace, head: string | null): Promise<number | null> {
    return commitsSince(ws, head);
  }

  commitWorktree(ws: Workspace, opts: { message: string; author: { name: string; email: string } }) {
    return commitWorktree(ws, opts);
  }

  async push(ws: Workspace, opts: { remote: string; ref?: string }): Promise<{ commit: string }> {
    if (ws.kind !== "worktree" || !ws.branch) throw new DomainError("NOT_A_WORKTREE", "Only a git worktree's branch can be pushed", { kind: "CONFLICT" });
    const commit = (await git(["rev-parse", `refs/heads/${ws.branch}`], { cwd: ws.path })).trim();
    const target = opts.ref ?? ws.branch;
    try {
      await git(["push", "--quiet", opts.remote, `${commit}:refs/heads/${target}`], { cwd: ws.path });
    } catch (err) {
      // another push of the same commit won the race (a worker pushes its agents' commits as they come)
      const there = await git(["ls-remote", opts.remote, `refs/heads/${target}`], { cwd: ws.path }).catch(() => "");
      if (there.split(/\s/)[0] !== commit) throw new DomainError("PUSH_FAILED", `Pushing ${ws.branch} to ${opts.remote} failed: ${(err as Error).message}`, { kind: "CONFLICT", cause: err });
    }
    return { commit };
  }

  worktreeGit(path: string, branch: string) {
    return worktreeGit(path, branch);
  }

  diskUsage(path: string): Promise<number> {
    return diskUsage(path);
  }
}

function keyOf(ref: SessionRef): string {
  return `${ref.pid}:${ref.startTime ?? ""}`;
}

/** A wait that never keeps the process alive (a shutdown does not wait for a long poll). */
function sleep(ms: number): Promise<void> {
  return new Promise((r) => setTimeout(r, ms).unref());
}

/** An error as plain JSON (a DomainError keeps its code, kind and details). */
export function serializeError(err: unknown): SerializedError {
  if (isDomainError(err)) return { name: err.name, message: err.message, code: err.code, kind: err.kind, ...(err.details !== undefined ? { details: err.details } : {}) };
  if (err instanceof Error) return { name: err.name, message: err.message };
  return { name: "Error", message: String(err) };
}

/** The error a `SerializedError` came from: a DomainError again when it was one. */
export function deserializeError(e: SerializedError): Error {
  if (e.code !== undefined) return new DomainError(isErrorCode(e.code) ? e.code : "INTERNAL_ERROR", e.message, { kind: (e.kind ?? "BAD_REQUEST") as DomainError["kind"], details: e.details });
  const err = new Error(e.message);
  err.name = e.name;
  return err;
}

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === "object" && v !== null && !Array.isArray(v);
}
