import { existsSync } from "node:fs";
import { join } from "node:path";
import type { MergeResult, MergeStrategy, SweepEntry } from "../../shared/agents";
import { DomainError } from "../errors";
import { adapterOf, workspaceOf, type AgentContext } from "./agent-context";
import { deserializeError } from "./local-host";
import type { AgentOutput } from "./agent-output";
import { agentTestHooks } from "./agent-test-hooks";
import { LIVE_STATUSES, mergeOf, type AgentRow, type RunKind } from "./agent-records";
import { isMergedInto } from "./disk";
import { mergeWorkspace } from "./merge";
import { commitRequestPrompt } from "./prompts";
import type { Workspace } from "./workspace";
import type { AgentHost } from "./agent-host";
import { fetchAgentBranch, mirrorUrlOf, pushMerge, refreshMirror } from "./repo-mirrors";

/** How often worktrees are measured and merged clean ones removed. */
export const SWEEP_INTERVAL_MS = 10 * 60_000;

/**
 * Agents' workspaces, through their host: made at spawn, restored for a resume, read (changes,
 * diff), merged, and cleaned up once the work landed (committed by the agent, or for it).
 */
export class AgentWorkspaces {
  private sweepTimer: NodeJS.Timeout | undefined;
  /** Per agent: the cleanup at idle under way; what a user does to the workspace waits for it. */
  private readonly landing = new Map<string, Promise<void>>();

  constructor(
    private readonly ctx: AgentContext,
    private readonly output: AgentOutput,
    /** Resume the agent's session with a prompt (the one commit request). */
    private readonly resume: (row: AgentRow, prompt: string, kind: Exclude<RunKind, "spawn">) => Promise<void>,
  ) {}

  /** The machine the agent's workspace is on (its worker's, or this one). */
  private hostOf(row: Pick<AgentRow, "worker">) {
    return this.ctx.hosts.of(row);
  }

  /** The worktree of a new agent (its setup command's output goes to the agent's log); a failure crashes the agent. */
  async create(id: string, host: AgentHost, req: { alias: string; repo: string; baseRef?: string; init: boolean; worktreesDir: string }): Promise<Workspace> {
    const made = await host.createWorkspace({ worktreesDir: req.worktreesDir, alias: req.alias, repo: req.repo, init: req.init, ...(req.baseRef ? { baseRef: req.baseRef } : {}) });
    await this.output.setup(id, made.setup).catch(() => undefined);
    if (made.ok) {
      const ws = made.workspace;
      await this.ctx.publish(id, "worktree.created", { alias: req.alias, path: ws.path, branch: ws.branch, baseCommit: ws.baseCommit, kind: ws.kind });
      return ws;
    }
    const err = deserializeError(made.error);
    const reason = err.message;
    await this.ctx.lifecycle.transition(id, "crashed", { patch: { statusReason: reason, finishedAt: Date.now(), workspaceRemoved: true }, event: { type: "agent.crashed", payload: { reason: reason.slice(0, 2000) } } });
    throw err;
  }

  /**
   * An agent on a worker: its branch pushed to its clone's origin (this server's repository, or the
   * repository's URL), so changes, diff and merge read it here and it outlives the worker. An agent
   * on this machine on a URL: its branch pushed from the mirror to the URL. Nothing for an agent on
   * this machine on a repository of it (its branch is there already). A failure is noted, not thrown.
   */
  async publishBranch(id: string): Promise<void> {
    const row = await this.ctx.records.find(id);
    if (!row || row.workspaceKind !== "worktree" || row.workspaceRemoved || !row.branch || !this.ctx.hosts.reachable(row)) return;
    if (row.worker === null && !mirrorUrlOf(row.repoPath)) return;
    try {
      const { commit } = await this.hostOf(row).push(workspaceOf(row), { remote: "origin" });
      this.ctx.log.debug({ agentId: id, commit }, "agent branch pushed from its worker");
    } catch (err) {
      this.ctx.log.warn({ err, agentId: id }, "pushing an agent's branch from its worker failed");
      await this.output.note(id, row.sessionNumber, "note", `pushing ${row.branch} from worker ${row.worker} failed: ${(err as Error).message}`).catch(() => undefined);
    }
  }

  /** A worktree removed by cleanup (not by a failed spawn): its repository is still there. */
  restorable(row: AgentRow): boolean {
    return row.workspaceKind === "worktree" && !!row.repoPath && !!row.baseCommit && !!row.branch && existsSync(row.repoPath);
  }

  /** Refuses (WORKSPACE_REMOVED) a workspace that is gone for good. */
  assertAvailable(row: AgentRow, what = ""): void {
    if (row.workspaceRemoved && !this.restorable(row)) throw new DomainError("WORKSPACE_REMOVED", `Agent ${row.alias}'s workspace was removed${what}`, { kind: "CONFLICT" });
  }

  async restore(row: AgentRow): Promise<AgentRow> {
    if (!this.restorable(row)) throw new DomainError("WORKSPACE_REMOVED", `Agent ${row.alias}'s workspace was removed: it cannot be resumed`, { kind: "CONFLICT" });
    const ws = workspaceOf(row);
    await this.hostOf(row).restoreWorktree(ws);
    await this.hostOf(row).writeInputFiles(ws.path, { agentId: row.id, alias: row.alias, mode: row.mode, task: row.task, provider: row.provider });
    await this.ctx.publish(row.id, "worktree.created", { alias: row.alias, path: ws.path, branch: ws.branch, baseCommit: ws.baseCommit, kind: "worktree" });
    await this.output.note(row.id, row.sessionNumber, "note", `worktree restored at ${ws.path} on ${ws.branch}`);
    return await this.ctx.records.update(row.id, { workspaceRemoved: false, commitRequests: 0, cleanupWarning: null });
  }

  /**
   * Where an agent's work is read (changes, diff, summary): its host; for an agent whose worker is
   * connected to no server (lost, stopped), this server's repository, where its branch was pushed
   * as it committed (a repository given as a URL: the server's mirror, with the agent's branch
   * fetched from the URL first): committed work only (`branchOnly`).
   */
  private async readerOf(row: AgentRow): Promise<{ host: AgentHost; ws: Workspace }> {
    const ws = workspaceOf(row);
    if (row.worker === null || this.ctx.hosts.reachable(row) || row.workspaceKind !== "worktree") return { host: this.hostOf(row), ws };
    if (row.branch && mirrorUrlOf(row.repoPath)) {
      await fetchAgentBranch(row.repoPath!, row.branch).catch((err: unknown) => this.ctx.log.warn({ err, agentId: row.id }, "fetching an agent's branch into the mirror failed: read as the mirror has it"));
    }
    return { host: this.ctx.hosts.local, ws: { ...ws, branchOnly: true } };
  }

  async changes(row: AgentRow) {
    this.assertAvailable(row);
    const { host, ws } = await this.readerOf(row);
    const [changes, commitsSinceMerge] = await Promise.all([host.changes(ws), host.commitsSince(ws, row.mergedHead)]);
    return { ...changes, commitsSinceMerge };
  }

  async diff(row: AgentRow, maxBytes?: number) {
    this.assertAvailable(row);
    const { host, ws } = await this.readerOf(row);
    return host.diff(ws, maxBytes ? { maxBytes } : {});
  }

  async summary(row: AgentRow, maxBytes: number) {
    this.assertAvailable(row);
    const { host, ws } = await this.readerOf(row);
    return host.summary(ws, { maxBytes });
  }

  /** Merge the agent's branch into a local branch (default: the one it started from). */
  async merge(row: AgentRow, opts: { into?: string; strategy?: MergeStrategy }): Promise<MergeResult> {
    await this.landed(row.id);
    row = await this.ctx.records.get(row.id);
    this.assertAvailable(row);
    if (LIVE_STATUSES.includes(row.status)) throw new DomainError("AGENT_RUNNING", `Agent ${row.alias} is still working: merge once it is done`, { kind: "CONFLICT" });
    // a URL's mirror: its branches as the remote has them now, the agent's as its worker pushed it
    const mirror = mirrorUrlOf(row.repoPath) ? row.repoPath! : null;
    if (mirror) {
      await refreshMirror(mirror);
      if (row.worker !== null && row.branch) await fetchAgentBranch(mirror, row.branch);
    }
    const result = await mergeWorkspace(workspaceOf(row), {
      ...opts,
      // read and recorded under the repository lock: two merges at once cannot both bring the work in
      previous: async () => mergeOf(await this.ctx.records.get(row.id)),
      onMerged: async (r) => {
        // on the remote first (a fast-forward there, or nothing anywhere), then recorded
        if (mirror) await pushMerge(mirror, r);
        await this.ctx.records.update(row.id, { mergedInto: r.into, mergeStrategy: r.strategy, mergeCommit: r.commit, mergedHead: r.head, mergedAt: Date.now() });
      },
    });
    if (result.merged && result.commit) {
      await this.ctx.publish(row.id, "worktree.merged", { alias: row.alias, branch: result.branch, into: result.into, commit: result.commit, strategy: result.strategy, ...(result.head ? { head: result.head } : {}) });
    }
    return result;
  }

  /**
   * A user's cleanup of a finished agent: its worktree removed now (its branch kept when it has
   * commits). Refused (WORKTREE_DIRTY, with the files) when work is uncommitted, unless `discard`.
   */
  async cleanup(row: AgentRow, opts: { discard?: boolean }): Promise<void> {
    await this.landed(row.id);
    row = await this.ctx.records.get(row.id);
    if (LIVE_STATUSES.includes(row.status)) throw new DomainError("AGENT_RUNNING", `Agent ${row.alias} is still working: clean up once it is done`, { kind: "CONFLICT" });
    if (row.workspaceRemoved || row.workspaceKind !== "worktree") return;
    const ws = workspaceOf(row);
    const dirty = (await this.hostOf(row).workspaceExists(ws.path)) ? await this.hostOf(row).dirtyFiles(ws) : [];
    if (dirty.length > 0 && !opts.discard) {
      throw new DomainError("WORKTREE_DIRTY", `The worktree ${ws.path} has uncommitted changes: ${dirty.slice(0, 10).join(", ")}${dirty.length > 10 ? ", ..." : ""}`, { kind: "CONFLICT", details: { files: dirty } });
    }
    if (dirty.length > 0) await this.output.note(row.id, row.sessionNumber, "note", `uncommitted work discarded by a user: ${dirty.slice(0, 20).join(", ")}`);
    const ahead = await this.hostOf(row).commitsAhead(ws);
    await this.hostOf(row).removeWorkspace(ws, { force: true, deleteBranch: ahead === 0 });
    await this.ctx.records.update(row.id, { workspaceRemoved: true, cleanupWarning: null, diskBytes: null });
    await this.ctx.publish(row.id, "worktree.removed", { alias: row.alias, path: ws.path, branch: ahead > 0 ? ws.branch : null, reason: dirty.length > 0 ? "cleaned up by a user, uncommitted work discarded" : "cleaned up by a user" });
  }

  /** A deleted agent's workspace (refused when dirty unless forced). */
  async remove(row: AgentRow, force: boolean): Promise<void> {
    if (row.workspaceRemoved) return;
    await this.hostOf(row).removeWorkspace(workspaceOf(row), { force });
    await this.ctx.publish(row.id, "worktree.removed", { alias: row.alias, path: row.workspacePath, branch: row.branch });
  }

  /**
   * After an agent goes idle, its work lands, then its worktree is cleaned up. Uncommitted work
   * gets one resume asking the agent to commit (when its CLI can resume); still uncommitted after
   * that, or when the CLI cannot be asked, Switchyard commits it on the agent's branch
   * (SWITCHYARD_AGENT_AUTOCOMMIT=on) or keeps it with a warning (off). Then a clean worktree is
   * removed (its branch kept only with commits; archived first in debug mode) unless cleanup is
   * off. Uncommitted work is never deleted.
   */
  afterIdle(id: string): Promise<void> {
    const run = this.landIdle(id);
    const settled = run.catch(() => undefined);
    this.landing.set(id, settled);
    void settled.then(() => {
      if (this.landing.get(id) === settled) this.landing.delete(id);
    });
    return run;
  }

  /**
   * Resolves once the cleanup at idle of the agent (commit, removal of its worktree) is over: a
   * message, answers, a merge or a user's cleanup started meanwhile would meet a worktree half
   * removed. (Its commit request's resume runs inside it and does not wait.)
   */
  async landed(id: string): Promise<void> {
    await this.landing.get(id);
  }

  private async landIdle(id: string): Promise<void> {
    const cleanup = this.ctx.config.agentCleanup;
    const autocommit = this.ctx.config.agentAutocommit === "on";
    if ((cleanup === "off" && !autocommit) || this.ctx.closed()) return;
    const row = await this.ctx.records.get(id);
    if (row.status !== "idle" || row.workspaceKind !== "worktree" || row.workspaceRemoved || !(await this.hostOf(row).workspaceExists(row.workspacePath))) return;
    const ws = workspaceOf(row);
    const dirty = await this.hostOf(row).dirtyFiles(ws);
    if (dirty.length > 0) {
      if (row.commitRequests < 1 && adapterOf(row.provider).resumeStyle !== "none" && row.sessionId) {
        const updated = await this.ctx.records.update(id, { commitRequests: row.commitRequests + 1, cleanupWarning: null });
        await this.output.note(id, row.sessionNumber, "note", `${dirty.length} uncommitted path(s) in the worktree: resuming once to ask for a commit`);
        await this.resume(updated, commitRequestPrompt({ workspacePath: ws.path, branch: ws.branch, paths: dirty, overridesDir: join(this.ctx.config.home, "prompts") }), "commit_request");
        return;
      }
      const failed = autocommit ? await this.commitForAgent(row, ws) : "SWITCHYARD_AGENT_AUTOCOMMIT is off";
      if (failed !== null) {
        await this.keepDirty(row, ws, dirty, failed);
        return;
      }
    }
    if (cleanup === "off") return;
    await this.removeClean(row, cleanup === "debug" ? "archive" : "remove", "clean after the agent finished");
  }

  /** Commit what the agent left on its branch, as the agent: null when it landed, else why not. */
  private async commitForAgent(row: AgentRow, ws: Workspace): Promise<string | null> {
    try {
      const { commit, files } = await this.hostOf(row).commitWorktree(ws, { message: autocommitMessage(row), author: agentIdentity(row) });
      await this.ctx.records.update(row.id, { cleanupWarning: null });
      await this.publishBranch(row.id);
      const shown = `${files.slice(0, 10).join(", ")}${files.length > 10 ? `, … (${files.length} in all)` : ""}`;
      await this.output.note(row.id, row.sessionNumber, "note", `the agent left ${files.length} path(s) uncommitted: Switchyard committed them on ${ws.branch} as ${commit.slice(0, 10)} (${shown})`);
      await this.ctx.publish(row.id, "worktree.committed", { alias: row.alias, branch: ws.branch ?? "", commit, files: files.slice(0, 100), fileCount: files.length });
      return null;
    } catch (err) {
      const reason = err instanceof Error ? err.message : String(err);
      this.ctx.log.warn({ err, agentId: row.id }, "committing an agent's work failed");
      return `committing it failed: ${reason}`;
    }
  }

  private async keepDirty(row: AgentRow, ws: Workspace, dirty: string[], why: string): Promise<void> {
    const shown = `${dirty.slice(0, 10).join(", ")}${dirty.length > 10 ? `, … (${dirty.length} in all)` : ""}`;
    const warning = `Uncommitted work was left in ${ws.path} (${shown}; ${why}); the worktree is kept until it is committed (there, or by asking the agent) or discarded (Discard and clean up; yard agent cleanup ${row.alias} --discard).`;
    await this.ctx.records.update(row.id, { cleanupWarning: warning });
    await this.ctx.publish(row.id, "worktree.kept", { alias: row.alias, path: ws.path, dirty: dirty.slice(0, 100), reason: warning.slice(0, 2000) });
  }

  /** Disk used by a finished agent's worktree, in the background (the list shows it). */
  measureDisk(id: string): void {
    void (async () => {
      const row = await this.ctx.records.find(id);
      if (!row || row.workspaceRemoved) return;
      if (!(await this.hostOf(row).workspaceExists(row.workspacePath))) return;
      const diskBytes = await this.hostOf(row).diskUsage(row.workspacePath);
      if (!this.ctx.closed() && (await this.ctx.records.find(id))) await this.ctx.records.update(id, { diskBytes, diskCheckedAt: Date.now() });
    })().catch(() => undefined);
  }

  private async removeClean(row: AgentRow, how: "remove" | "archive", reason: string): Promise<void> {
    await agentTestHooks.beforeWorktreeRemoval?.(row.id);
    const ws = workspaceOf(row);
    const ahead = await this.hostOf(row).commitsAhead(ws);
    if (how === "archive") await this.hostOf(row).archiveWorkspace(ws, join(this.hostOf(row).home, "archive", `${row.alias}-${Date.now()}`));
    await this.hostOf(row).removeWorkspace(ws, { deleteBranch: ahead === 0 });
    await this.ctx.records.update(row.id, { workspaceRemoved: true, cleanupWarning: null, diskBytes: null });
    const kept = ahead > 0 ? `branch ${ws.branch} kept with ${ahead} commit(s)` : "no commits, so its branch was deleted too";
    await this.output.note(row.id, row.sessionNumber, "note", `worktree ${how === "archive" ? "archived and " : ""}removed (${reason}); ${kept}`);
    await this.ctx.publish(row.id, "worktree.removed", { alias: row.alias, path: ws.path, branch: ahead > 0 ? ws.branch : null, reason });
  }

  /** The sweep soon after start, then every SWEEP_INTERVAL_MS. */
  startSweeps(): void {
    const sweep = () => {
      if (!this.ctx.closed()) this.sweep().catch((err: unknown) => this.ctx.log.warn({ err }, "worktree sweep failed"));
    };
    setTimeout(sweep, 30_000).unref();
    this.sweepTimer ??= setInterval(sweep, SWEEP_INTERVAL_MS);
    this.sweepTimer.unref();
  }

  stopSweeps(): void {
    clearInterval(this.sweepTimer);
  }

  /**
   * The periodic sweep: disk used per worktree; worktrees of finished agents whose branch is
   * merged into its base and that are clean are removed; stale worktree metadata is pruned.
   */
  async sweep(): Promise<SweepEntry[]> {
    const report: SweepEntry[] = [];
    const repos = new Set<string>();
    for (const row of await this.ctx.records.all()) {
      // an agent on a worker that is not connected to this server is measured by the one it is
      if (!this.ctx.hosts.reachable(row)) continue;
      if (row.workspaceKind !== "worktree" || row.workspaceRemoved || !(await this.hostOf(row).workspaceExists(row.workspacePath))) continue;
      if (row.repoPath && row.worker === null) repos.add(row.repoPath);
      const diskBytes = await this.hostOf(row).diskUsage(row.workspacePath);
      await this.ctx.records.update(row.id, { diskBytes, diskCheckedAt: Date.now() });
      const entry: SweepEntry = { agentId: row.id, alias: row.alias, path: row.workspacePath, diskBytes, removed: false };
      report.push(entry);
      if (LIVE_STATUSES.includes(row.status) || row.status === "waiting_for_input" || row.status === "waiting_for_account") continue;
      const ws = workspaceOf(row);
      if (!ws.branch || !row.baseRef || (await this.hostOf(row).dirtyFiles(ws)).length > 0) continue;
      const into = (await isMergedInto(row.repoPath!, ws.branch, row.baseRef)) ? row.baseRef : await this.mergedByRecord(row, ws);
      if (!into) continue;
      await this.removeClean(row, this.ctx.config.agentCleanup === "debug" ? "archive" : "remove", `its branch is merged into ${into}`);
      entry.removed = true;
      entry.note = `merged into ${into}`;
    }
    for (const repo of repos) await this.ctx.hosts.local.pruneWorktrees(repo).catch(() => undefined);
    return report;
  }

  /**
   * A squash or rebase leaves the branch outside its target's history: the merge record tells it
   * is merged when nothing came on the branch since and the merge's commit is still on the target.
   */
  private async mergedByRecord(row: AgentRow, ws: Workspace): Promise<string | null> {
    const m = mergeOf(row);
    if (!m || !row.repoPath || (await this.hostOf(row).commitsSince(ws, m.head)) !== 0) return null;
    return (await isMergedInto(row.repoPath, m.commit, m.into, { commit: true })) ? m.into : null;
  }
}

/** The agent as a commit's author: `<alias> (<provider> agent)`. */
function agentIdentity(row: AgentRow): { name: string; email: string } {
  return { name: `${row.alias} (${row.provider} agent)`, email: `${row.alias}@agents.switchyard.invalid` };
}

/** The message of a commit Switchyard makes for an agent: its result first, then where it came from. */
export function autocommitMessage(row: Pick<AgentRow, "id" | "alias" | "provider" | "result" | "task">): string {
  const result = (row.result ?? "").trim();
  const source = result || row.task.trim() || `work of agent ${row.alias}`;
  const first = source.split("\n")[0]!.trim();
  const subject = first.length > 72 ? `${first.slice(0, 71)}…` : first;
  const body = source === first ? "" : `${source}\n\n`;
  return `${subject}\n\n${body}The agent left this work uncommitted; Switchyard committed it on its branch.\n\nSwitchyard-Agent: ${row.alias} (${row.id}, ${row.provider})\n`;
}
