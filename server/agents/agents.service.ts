import type { Cluster } from "../cluster/cluster.service";
import type { CommandOp } from "../cluster/commands";
import { existsSync } from "node:fs";
import { join, resolve } from "node:path";
import { SpawnAgentInput, type AgentGrant, type AgentInfo } from "../../shared/agents";
import type { ListPage } from "../../shared/api";
import type { EventPayload, EventType } from "../../shared/events";
import type { AccountsService } from "../accounts/accounts.service";
import { uuidv7 } from "../lib/uuidv7";
import type { RowWrite, Store } from "../db/store";
import { DomainError } from "../errors";
import type { EventBus } from "../events/bus";
import type { Logger } from "../log";
import { AgentApprovals, type ApprovalDecision } from "./agent-approvals";
import { adapterOf, agentDir, parsePlacement, type AgentContext, type AgentsConfig, type Placed } from "./agent-context";
import { agentSecrets, verifyAgentToken } from "./agent-env";
import { localHosts, type AgentHost, type AgentHosts } from "./agent-host";
import { AgentLifecycle } from "./agent-lifecycle";
import { AgentMessages } from "./agent-messages";
import { AgentOutput, type OutputQuery } from "./agent-output";
import { AgentFollowUps } from "./agent-follow-ups";
import { AgentRecords } from "./agent-records";
import { AgentTrees } from "./agent-trees";
import { AgentViews, type AgentFilter } from "./agent-views";
import { AgentRunner } from "./agent-runner";
import { AgentWorkspaces } from "./agent-workspaces";
import { generateAlias } from "./aliases";
import { git, repoRootOf } from "./git";
import { LocalAgentHost } from "./local-host";
import type { MergeResult, MergeStrategy } from "../../shared/agents";
import { buildPrompt } from "./prompts";
import { gitExportKey } from "../git-http/export-key";
import { LIVE_STATUSES, type AgentRow } from "./agent-records";
import { repoNotGit } from "./workspace";
import { parseRepoUrl } from "./repo-url";
import { defaultBranchOf, ensureMirror, mirrorUrlOf, refreshMirror } from "./repo-mirrors";

export type { AgentsConfig } from "./agent-context";
export type { OutputQuery } from "./agent-output";
export { agentTestHooks } from "./agent-test-hooks";
export { autocommitMessage } from "./agent-workspaces";

export type { Placed } from "./agent-context";

/** The workers' side of placement (server/workers/workers.service.ts): hosts and the choice of one. */
export interface WorkerPlacement {
  /** A connected worker's host, or undefined when it is not connected to this server. */
  hostOf(name: string): AgentHost | undefined;
  /** Where an agent asking for this runs (workers.service.ts: the default rule). */
  place(req: { provider: string; worker?: string; labels: string[] }): Promise<Placed>;
  /** The id of the other live server of the database a worker is connected to now (undefined: none, or this one). */
  serverOf(name: string): Promise<string | undefined>;
}

export interface AgentsServiceOptions {
  /** The database (SQLite or PostgreSQL) every part of the domain reads and writes. */
  store: Store;
  bus: EventBus;
  log: Logger;
  config: AgentsConfig;
  /** Where agents reach this server (http://127.0.0.1:PORT), known once it listens. */
  serverUrl(): string;
  /** Watchdog / liveness poll interval (default 500 ms). */
  pollMs?: number;
  env?: NodeJS.ProcessEnv;
  /** Registered provider accounts (failover on usage limits); without it agents use the server's env. */
  accounts?: AccountsService;
  /** This machine's host (default: a LocalAgentHost on the config's home; tests: a JSON loopback of it). */
  host?: AgentHost;
  /** Workers on other machines (`yard worker`): where agents are placed once one is registered. */
  workers?: WorkerPlacement;
  /** The servers of the database: which one watches each running agent (absent: this one watches all). */
  cluster?: Cluster;
}

/**
 * CLI coding agents, the facade: spawn in a worktree, answer, message, stop, delete, recover.
 * The work is done by its parts: AgentRunner (process runs and what their end means),
 * AgentWorkspaces (worktrees: cleanup, changes, merge), AgentOutput (the log), all on an
 * AgentHost (the machine the CLIs run on) and through AgentLifecycle (every status change).
 */
export class AgentsService {
  readonly approvals: AgentApprovals;
  private readonly ctx: AgentContext;
  private readonly records: AgentRecords;
  private readonly messages: AgentMessages;
  private readonly out: AgentOutput;
  private readonly runner: AgentRunner;
  private readonly workspaces: AgentWorkspaces;
  private readonly views: AgentViews;
  private readonly trees: AgentTrees;
  private readonly followUps: AgentFollowUps;
  private readonly secrets: { mint: Buffer; accept: Buffer[] };
  private closed = false;
  /** Placements of queued agents, one pass at a time. */
  private placing: Promise<void> = Promise.resolve();

  constructor(private readonly opts: AgentsServiceOptions) {
    this.records = new AgentRecords(opts.store);
    this.messages = new AgentMessages(opts.store);
    this.approvals = new AgentApprovals(opts.store, opts.bus);
    const local = opts.host ?? new LocalAgentHost({ home: opts.config.home, pollMs: opts.pollMs ?? 500 });
    this.ctx = {
      bus: opts.bus,
      log: opts.log,
      config: opts.config,
      hosts: opts.workers ? workerHosts(local, opts.workers) : localHosts(local),
      records: this.records,
      messages: this.messages,
      lifecycle: new AgentLifecycle(this.records, opts.bus),
      approvals: this.approvals,
      accounts: opts.accounts,
      env: opts.env ?? process.env,
      closed: () => this.closed,
      claim: async (agentId, how) => !opts.cluster || (await opts.cluster.leases.acquire("agent", agentId, how)) !== undefined,
      release: async (agentId) => void (await opts.cluster?.leases.release("agent", agentId).catch(() => {})),
      ...(opts.cluster ? { fenceOf: (agentId: string) => opts.cluster!.leases.fenceOf("agent", agentId) } : {}),
      publish: (agentId, type, payload, write) => this.publish(agentId, type, payload, write),
      ...(opts.workers ? { place: (provider: string, req: { worker?: string; labels: string[] }) => this.place(provider, req) } : {}),
    };
    this.out = new AgentOutput(opts.store, this.ctx);
    this.secrets = agentSecrets(opts.config.home, opts.config.secretKey);
    this.runner = new AgentRunner(this.ctx, this.out, { secret: this.secrets.mint, serverUrl: opts.serverUrl, pollMs: opts.pollMs ?? 500 });
    this.workspaces = new AgentWorkspaces(this.ctx, this.out, (row, prompt, kind) => this.runner.resumeWith(row, prompt, kind));
    this.runner.useWorkspaces(this.workspaces);
    this.views = new AgentViews(opts.store, this.records, this.approvals, this.messages, opts.accounts);
    this.trees = new AgentTrees(this.records, this.views, opts.config);
    this.followUps = new AgentFollowUps(this.ctx, this.out, this.runner, this.workspaces);
    opts.accounts?.onAvailable((provider) => this.runner.wakeWaiting(provider));
    opts.cluster?.commands.handle("agent.stop", (p) => this.stop((p as { id: string }).id, { cascade: (p as { cascade?: boolean }).cascade ?? false }));
    // what needs an agent's worker, sent by a server the worker is not connected to
    opts.cluster?.commands.handle("agent.answer", (p) => this.resume((p as { id: string }).id, (p as { answers: Record<string, string> }).answers));
    opts.cluster?.commands.handle("agent.message", (p) => this.message((p as { id: string }).id, (p as { text: string }).text));
    opts.cluster?.commands.handle("agent.cleanup", (p) => this.cleanup((p as { id: string }).id, { discard: (p as { discard?: boolean }).discard ?? false }));
    opts.cluster?.commands.handle("agent.changes", (p) => this.changes((p as { id: string }).id));
    opts.cluster?.commands.handle("agent.diff", (p) => this.diff((p as { id: string }).id, (p as { maxBytes?: number }).maxBytes));
    opts.cluster?.commands.handle("agent.summary", (p) => this.summary((p as { id: string }).id, (p as { maxBytes: number }).maxBytes));
    // another server watches it now (this one was paused or cut off past the lease): stop watching
    // here, leaving its process to the new watcher (the fence refuses what this one would still store)
    opts.cluster?.onLost("agent", (id) => void this.runner.forget(id));
  }

  get logs() {
    return this.out.logs;
  }

  /** Live agents running on an account (and the ones waiting for a human on it). */
  activeOnAccount(accountId: string): Promise<number> {
    return this.views.activeOnAccount(accountId);
  }

  /** The canonical id of an agent given by id or alias (AGENT_NOT_FOUND; `lenient`: unknown ones as given). */
  resolveId(idOrAlias: string, opts: { lenient?: boolean } = {}): Promise<string> {
    return this.records.idOf(idOrAlias, opts);
  }

  /** The agent a token was issued to (tokens in agents' SWITCHYARD_TOKEN), or null. */
  agentOfToken(token: string): string | null {
    return verifyAgentToken(this.secrets.accept, token);
  }

  get activeCount(): number {
    return this.runner.liveCount;
  }

  /** A page of agents, newest first (`{ items, nextCursor }`; no `limit`: all of them). */
  list(filter: AgentFilter = {}, page: { limit?: number; cursor?: string | null } = {}): Promise<ListPage<AgentInfo>> {
    return this.views.list(filter, page);
  }

  /** How many agents the filter keeps: in all, per status, and needing a human. */
  counts(filter: Omit<AgentFilter, "status" | "needsYou"> = {}) {
    return this.views.counts(filter);
  }

  /** The agent's usage plus that of every agent it spawned, and theirs (a strategy step's spend). */
  async treeUsage(idOrAlias: string): Promise<AgentInfo["usage"]> {
    return this.trees.usage(await this.records.idOf(idOrAlias));
  }

  /** The agent's own id and those of the agents it spawned: what its token may act on. */
  familyOf(agentId: string): Promise<Set<string>> {
    return this.trees.family(agentId);
  }

  /** Whether the agent's token was granted this right at spawn (e.g. `daemons`). */
  hasGrant(agentId: string, grant: AgentGrant): Promise<boolean> {
    return this.trees.hasGrant(agentId, grant);
  }

  /** Every provider adapter, and whether its CLI is installed here. */
  providers() {
    return this.runner.providers();
  }

  get(idOrAlias: string): Promise<AgentInfo> {
    return this.views.get(idOrAlias);
  }

  /**
   * A new agent. `parentAgentId`: the agent whose token asked (its child: the parent's repo and
   * base by default; AGENT_TREE_TOO_DEEP / AGENT_TOO_MANY_CHILDREN past the configured limits;
   * AGENT_FORBIDDEN for a grant the parent does not have).
   */
  async spawn(raw: SpawnAgentInput, opts: { parentAgentId?: string } = {}): Promise<AgentInfo> {
    let input = SpawnAgentInput.parse(raw);
    const parent = opts.parentAgentId ? await this.records.get(opts.parentAgentId) : null;
    if (parent) {
      await this.trees.checkLimits(parent.id);
      this.trees.checkGrants(parent, input.grants ?? []);
      input = { ...input, repo: input.repo ?? parent.repoPath ?? undefined, baseRef: input.baseRef ?? parent.baseRef ?? undefined };
    }
    const adapter = adapterOf(input.provider);
    const placement = { ...(input.worker ? { worker: input.worker } : {}), labels: input.labels ?? [] };
    const placed = await this.place(adapter.name, placement);
    if (!("queued" in placed) && placed.worker === null) this.runner.commandOf(adapter);
    const preferredAccount = input.account ? await this.runner.accountFor(adapter.name, input.account) : null;
    const repo = await this.repoOf(input);
    // a URL's agent branches from the remote's default branch, by name (wherever it runs), unless told
    if (!input.baseRef && mirrorUrlOf(repo)) input = { ...input, baseRef: await defaultBranchOf(repo) };
    const id = `agent_${uuidv7()}`;
    const host = "queued" in placed ? this.ctx.hosts.local : this.ctx.hosts.of(placed);
    const worktreesDir = join(host.home, "worktrees");
    const alias = await this.insertSpawn(
      {
        id,
        provider: adapter.name,
        input,
        repo,
        configDir: join(agentDir(host, id), "config"),
        accountId: preferredAccount,
        parentAgentId: parent?.id ?? null,
        worker: "queued" in placed ? null : placed.worker,
        workerEpoch: "worker" in placed && placed.worker !== null ? placed.epoch : null,
        placement: JSON.stringify(placement),
      },
      worktreesDir,
    );
    if ("queued" in placed) {
      const row = await this.records.get(id);
      await this.ctx.lifecycle.transition(id, "queued", { expectedVersion: row.version, patch: { statusReason: placed.queued }, event: { type: "agent.status_changed", payload: { status: "queued", reason: placed.queued } } });
      await this.publish(id, "agent.spawned", { alias, provider: adapter.name, status: "queued", workspacePath: row.workspacePath, branch: null });
      return this.get(id);
    }
    await this.start(id, { init: input.init ?? false });
    return this.get(id);
  }

  /**
   * A spawn's repository: a directory of this machine (REPO_NOT_FOUND, REPO_NOT_GIT), or a git URL
   * (a child's, when its parent works on one) whose mirror is cloned or fetched now (REPO_URL_INVALID,
   * REPO_UNREACHABLE): the row names the mirror (repo-mirrors.ts).
   */
  private async repoOf(input: { repo?: string | undefined; init?: boolean | undefined }): Promise<string> {
    const given = input.repo ?? process.cwd();
    const url = parseRepoUrl(given) ?? mirrorUrlOf(resolve(given));
    if (url) {
      if (input.init) throw new DomainError("REPO_URL_INVALID", `repo: init makes a directory of the server a git repository; ${url} is one already (spawn without init)`, { details: { field: "init", repo: url } });
      return ensureMirror(this.opts.config.home, url);
    }
    const repo = resolve(given);
    if (!existsSync(repo)) throw new DomainError("REPO_NOT_FOUND", `The repository path ${repo} does not exist`);
    if (!input.init && !(await repoRootOf(repo))) throw repoNotGit(repo);
    return repo;
  }

  /** Where an agent runs: its worker (connected and with room), this machine, or queued with the reason. */
  private async place(provider: string, req: { worker?: string; labels: string[] }): Promise<Placed> {
    if (req.worker === "local" || !this.opts.workers) {
      if (req.labels.length > 0 && !this.opts.workers) throw new DomainError("WORKER_NOT_FOUND", "Labels choose a worker, and this server has no workers", { kind: "NOT_FOUND" });
      return { worker: null };
    }
    return this.opts.workers.place({ provider, labels: req.labels, ...(req.worker ? { worker: req.worker } : {}) });
  }

  /** A placed agent's first run: its worktree on its host, its input files, then its CLI. */
  private async start(id: string, opts: { init: boolean; fromQueue?: boolean }): Promise<void> {
    let row = await this.records.get(id);
    const host = this.ctx.hosts.of(row);
    const adapter = adapterOf(row.provider);
    // a URL's mirror was fetched at the spawn; a queued agent starting here later branches from what the remote has now
    if (opts.fromQueue && row.worker === null && mirrorUrlOf(row.repoPath)) await refreshMirror(row.repoPath!).catch(() => undefined);
    const ws = await this.workspaces.create(id, host, { alias: row.alias, repo: row.repoPath!, init: opts.init, worktreesDir: join(host.home, "worktrees"), ...(row.baseRef ? { baseRef: row.baseRef } : {}) });
    await host.writeInputFiles(ws.path, { agentId: id, alias: row.alias, mode: row.mode, task: row.task, provider: adapter.name });
    const prompt = buildPrompt({ mode: row.mode, task: row.task, agentId: id, alias: row.alias, workspacePath: ws.path, overridesDir: join(this.opts.config.home, "prompts") });
    row = await this.records.update(id, { prompt, workspacePath: ws.path, workspaceKind: ws.kind, branch: ws.branch, baseRef: ws.baseRef, baseCommit: ws.baseCommit });
    const launched = await this.runner.launch(row, { prompt, kind: "spawn" });
    if (opts.fromQueue) return;
    await this.publish(id, "agent.spawned", {
      alias: row.alias,
      provider: adapter.name,
      status: launched ? "running" : "waiting_for_account",
      ...(launched ? { pid: launched.ref.pid } : {}),
      workspacePath: ws.path,
      branch: ws.branch,
    });
  }

  /**
   * Queued agents, oldest first, get a place when one opened (a worker connected, or one of its
   * agents finished): each started there, the rest wait.
   */
  placeQueued(): Promise<void> {
    this.placing = this.placing.then(async () => {
      for (const row of await this.records.all()) {
        if (this.closed || row.status !== "queued") continue;
        // the resume of an agent whose worker was lost (it ran before; a queued spawn never did): it
        // goes on from its pushed branch, or waits on
        if (row.worker !== null && row.sessionNumber > 0) {
          await this.runner.resumeQueued(row).catch((err: unknown) => this.opts.log.warn({ err, agentId: row.id }, "resuming a queued agent failed"));
          continue;
        }
        const want = parsePlacement(row.placement);
        const placed = await this.place(row.provider, want).catch((err: unknown) => ({ queued: err instanceof Error ? err.message : String(err) }));
        if ("queued" in placed) {
          if (placed.queued !== row.statusReason) await this.records.update(row.id, { statusReason: placed.queued });
          continue;
        }
        const host = this.ctx.hosts.of(placed);
        const claimed = await this.records.claimQueued(row.id, row.version, {
          worker: placed.worker,
          workerEpoch: placed.worker === null ? null : placed.epoch,
          configDir: join(agentDir(host, row.id), "config"),
          workspacePath: join(host.home, "worktrees", row.alias),
        });
        // another pass took it first (another server of the database)
        if (!claimed) continue;
        await this.start(row.id, { init: false, fromQueue: true }).catch((err: unknown) => this.opts.log.warn({ err, agentId: row.id }, "starting a queued agent failed"));
      }
    });
    return this.placing;
  }

  /**
   * The server to send what needs an agent's worker to: the other server of the database its
   * worker is connected to (undefined: the worker is connected here, or nowhere, or the agent is
   * on no worker). Its session, worktree and output are reached only through that connection.
   */
  private async workerServer(row: AgentRow): Promise<string | undefined> {
    const workers = this.opts.workers;
    if (!row.worker || !this.opts.cluster || !workers || workers.hostOf(row.worker)) return undefined;
    return workers.serverOf(row.worker);
  }

  /** `op` sent to the server the agent's worker is connected to, when that is another one: its answer; else undefined (do it here). */
  private async onWorkerServer<T>(row: AgentRow, op: CommandOp, payload: Record<string, unknown>): Promise<{ answer: T } | undefined> {
    const there = await this.workerServer(row);
    return there ? { answer: await this.opts.cluster!.commands.send<T>(there, op, { id: row.id, ...payload }) } : undefined;
  }

  /** Answer the agent's pending questions; it resumes on the same session in the same worktree. */
  async resume(idOrAlias: string, answers: Record<string, string>): Promise<AgentInfo> {
    const row = await this.records.get(idOrAlias);
    const sent = await this.onWorkerServer<AgentInfo>(row, "agent.answer", { answers });
    if (sent) return sent.answer;
    return this.get(await this.followUps.answer(row.id, answers));
  }

  /** A follow-up: queued for a live agent (delivered at its next idle point, never lost), else it resumes the agent now. */
  async message(idOrAlias: string, text: string): Promise<{ delivered: "now" | "queued"; agent: AgentInfo }> {
    const row = await this.records.get(idOrAlias);
    const sent = await this.onWorkerServer<{ delivered: "now" | "queued"; agent: AgentInfo }>(row, "agent.message", { text });
    if (sent) return sent.answer;
    const delivered = await this.followUps.message(row.id, text);
    return { delivered, agent: await this.get(row.id) };
  }

  /** Remove a finished agent's worktree now (WORKTREE_DIRTY unless `discard`); its branch is kept when it has commits. */
  async cleanup(idOrAlias: string, opts: { discard?: boolean } = {}): Promise<AgentInfo> {
    const row = await this.records.get(idOrAlias);
    const sent = await this.onWorkerServer<AgentInfo>(row, "agent.cleanup", { discard: opts.discard ?? false });
    if (sent) return sent.answer;
    await this.workspaces.cleanup(row, opts);
    return this.get(row.id);
  }

  /** Resolves once the agent's last process run has been handled (result recorded, cleanup decided). */
  async settled(idOrAlias: string): Promise<AgentInfo> {
    const id = await this.records.idOf(idOrAlias);
    await this.runner.settled(id);
    return this.get(id);
  }

  /** Stop the agent (`cascade`: first the agents it spawned, and theirs, that are still at work). */
  async stop(idOrAlias: string, opts: { cascade?: boolean } = {}): Promise<AgentInfo> {
    const row = await this.records.get(idOrAlias);
    // its process is watched by another server of the database: that server stops it
    const cluster = this.opts.cluster;
    const owner = cluster && !this.runner.isLive(row.id) ? await cluster.leases.remoteOwner("agent", row.id) : undefined;
    if (owner) return cluster!.commands.send<AgentInfo>(owner, "agent.stop", { id: row.id, cascade: opts.cascade ?? false });
    if (opts.cascade) {
      for (const child of await this.records.childrenOf(row.id)) {
        if (child.status !== "stopped" && child.status !== "crashed" && child.status !== "idle") await this.stop(child.id, { cascade: true });
      }
    }
    if (await this.runner.stopLive(row.id)) return this.get(row.id);
    // a run that ended meanwhile (while its children stopped) is handled first, and what its end
    // started (a follow-up, a commit request) is stopped; else the agent is moved as it is now
    await this.runner.settled(row.id);
    if (await this.runner.stopLive(row.id)) return this.get(row.id);
    const now = await this.records.get(row.id);
    if (now.status === "stopped" || now.status === "crashed") return this.get(row.id);
    await this.ctx.lifecycle.transition(row.id, "stopped", {
      expectedVersion: now.version,
      patch: { statusReason: "stopped by a user", pid: null, finishedAt: Date.now() },
      event: { type: "agent.stopped", payload: { reason: "stopped by a user" } },
    });
    await this.approvals.expireFor(row.id, "the agent was stopped");
    return this.get(row.id);
  }

  /** Stop it, remove its workspace (refused when dirty unless forced) and its record; logs stay. */
  async delete(idOrAlias: string, opts: { force?: boolean } = {}): Promise<void> {
    const row = await this.records.get(idOrAlias);
    if (this.runner.isLive(row.id)) await this.stop(row.id);
    await this.workspaces.remove(row, opts.force ?? false);
    await this.records.remove(row.id);
    await this.messages.forget(row.id);
    this.out.forget(row.id);
    if (this.ctx.hosts.reachable(row)) await this.ctx.hosts.of(row).removeAgentDir(agentDir(this.ctx.hosts.of(row), row.id));
    await this.publish(row.id, "agent.deleted", { alias: row.alias });
  }

  async changes(idOrAlias: string): Promise<Awaited<ReturnType<AgentWorkspaces["changes"]>>> {
    const row = await this.records.get(idOrAlias);
    const sent = await this.onWorkerServer<Awaited<ReturnType<AgentWorkspaces["changes"]>>>(row, "agent.changes", {});
    if (sent) return sent.answer;
    return this.workspaces.changes(row);
  }

  /** Merge the agent's branch into a local branch (default: the one it started from). */
  async merge(idOrAlias: string, opts: { into?: string; strategy?: MergeStrategy } = {}): Promise<MergeResult> {
    return this.workspaces.merge(await this.records.get(idOrAlias), opts);
  }

  /** Changes and a capped diff at once (a CLI step's hand-over to the next step). */
  async summary(idOrAlias: string, maxBytes: number): Promise<Awaited<ReturnType<AgentWorkspaces["summary"]>>> {
    const row = await this.records.get(idOrAlias);
    const sent = await this.onWorkerServer<Awaited<ReturnType<AgentWorkspaces["summary"]>>>(row, "agent.summary", { maxBytes });
    if (sent) return sent.answer;
    return this.workspaces.summary(row, maxBytes);
  }

  async diff(idOrAlias: string, maxBytes?: number): Promise<Awaited<ReturnType<AgentWorkspaces["diff"]>>> {
    const row = await this.records.get(idOrAlias);
    const sent = await this.onWorkerServer<Awaited<ReturnType<AgentWorkspaces["diff"]>>>(row, "agent.diff", maxBytes === undefined ? {} : { maxBytes });
    if (sent) return sent.answer;
    return this.workspaces.diff(row, maxBytes);
  }

  sweep() {
    return this.workspaces.sweep();
  }

  /** A page of an agent's output: parsed events and/or raw lines, by line range (or the tail). */
  output(idOrId: string, q: OutputQuery) {
    return this.out.page(idOrId, q);
  }

  /** The lines of one persisted chunk, parsed (what an `agent.output_produced` event points at). */
  chunkOutput(agentId: string, chunkId: number, format: OutputQuery["format"] = "events") {
    return this.out.chunk(agentId, chunkId, format);
  }

  /** Called by the permission MCP endpoint: waits for a human's decision (never times out). */
  async requestApproval(agentId: string, toolName: string, input: unknown): Promise<ApprovalDecision> {
    return this.approvals.request(await this.resolveId(agentId), toolName, input);
  }

  /** After a restart: re-attach to live processes; finish the dead ones from their output. */
  async recover(): Promise<{ reattached: string[]; finished: string[] }> {
    const cluster = this.opts.cluster;
    // one server on the database: whatever waited on the server that stopped is over
    if (!cluster?.shared) await this.approvals.expireAll("the server restarted while the agent waited");
    const outcome = await this.runner.reattachAll();
    this.workspaces.startSweeps();
    if (cluster?.shared) {
      cluster.onScan(async () => {
        if (this.closed) return;
        const taken = await this.runner.reattachAll({ takeover: true });
        if (taken.reattached.length + taken.finished.length > 0) this.opts.log.info(taken, "agents taken over from a lost server");
      });
    }
    return outcome;
  }

  /**
   * A worker was lost (no contact for the lost delay): its agents that were running are
   * interrupted (their work pushed so far is on their branch; `agents.resume` starts them again).
   * Returns their ids.
   */
  async workerLost(name: string): Promise<string[]> {
    const interrupted: string[] = [];
    const reason = `worker ${name} lost`;
    for (const listed of await this.records.all()) {
      if (listed.worker !== name || !LIVE_STATUSES.includes(listed.status)) continue;
      await this.runner.forget(listed.id);
      // read again after the watch stopped: what it was doing meanwhile (its run's end being
      // handled) may have moved it; a move racing this one is met by trying again on the row as it is
      for (let attempt = 1; ; attempt++) {
        const row = await this.records.find(listed.id);
        if (!row || row.worker !== name || !LIVE_STATUSES.includes(row.status)) break;
        try {
          await this.ctx.lifecycle.transition(row.id, "interrupted", {
            expectedVersion: row.version,
            patch: { statusReason: `${reason}: what it had not pushed stays on that machine`, pid: null, finishedAt: Date.now() },
            event: { type: "agent.status_changed", payload: { status: "interrupted", reason } },
          });
          interrupted.push(row.id);
          break;
        } catch (err) {
          const moved = err instanceof DomainError && err.code === "AGENT_VERSION_CONFLICT";
          if (!moved || attempt >= 5) {
            this.opts.log.warn({ err, agentId: row.id }, "interrupting an agent of a lost worker failed");
            break;
          }
        }
      }
      await this.approvals.expireFor(listed.id, reason);
      await this.ctx.release(listed.id);
    }
    return interrupted;
  }

  /** The repository a git export key names, if an agent on a worker works on it (server/git-http). */
  async repoOfExportKey(key: string): Promise<{ repoPath: string } | null> {
    for (const repoPath of await this.records.workerRepos()) if (gitExportKey(repoPath) === key) return { repoPath };
    return null;
  }

  /** Whether a worker has (or had) an agent on the repository of that export key: what its token may fetch and push. */
  async workerUsesRepo(worker: string, key: string): Promise<boolean> {
    for (const repoPath of await this.records.workerRepos(worker)) if (gitExportKey(repoPath) === key) return true;
    return false;
  }

  /**
   * The fence on a worker's pushes: it may move only `switchyard/<alias>` branches of agents on
   * that repository placed on it now and not interrupted (a lost worker's agent may have been
   * resumed elsewhere; its copy must not overwrite what the new one pushes). The refs refused, with
   * why, or null when all may move.
   */
  async workerMayPush(worker: string, key: string, refs: readonly string[]): Promise<{ refs: string[]; reason: string } | null> {
    const refused: string[] = [];
    let reason = "";
    for (const ref of refs) {
      const branch = ref.replace(/^refs\/heads\//, "");
      const row = (await this.records.onBranch(branch)).find((r) => r.repoPath !== null && gitExportKey(r.repoPath) === key);
      const why =
        !row ? `no agent works on ${branch}` : row.worker !== worker ? `${branch} is agent ${row.alias}'s, placed on ${row.worker === null ? "the server" : `worker ${row.worker}`}, not on ${worker}` : row.status === "interrupted" ? `agent ${row.alias} was interrupted: ${worker} no longer holds it` : null;
      if (why) {
        refused.push(ref);
        reason ||= why;
      }
    }
    return refused.length === 0 ? null : { refs: refused, reason };
  }

  /** Server shutdown: stop watching agents (they keep running and are re-attached at start). */
  async shutdown(): Promise<void> {
    this.closed = true;
    this.workspaces.stopSweeps();
    await this.runner.detachAll();
    await this.out.flush();
  }

  /**
   * A spawn's row, under the alias asked for (ALIAS_TAKEN when an agent has it) or a free one (no
   * agent's, no worktree folder's); another spawn taking it meanwhile (here, or on another server)
   * is met by picking again. Returns the alias.
   */
  private async insertSpawn(row: Omit<Parameters<AgentRecords["insertNew"]>[0], "alias" | "workspacePath">, worktreesDir: string): Promise<string> {
    const wanted = row.input.alias;
    const taken = () => new DomainError("ALIAS_TAKEN", `The alias "${wanted}" is in use`, { kind: "CONFLICT" });
    if (wanted && (await this.records.aliasTaken(wanted))) throw taken();
    const inUse = wanted ? new Set<string>() : await this.records.aliases();
    // an alias whose branch the repository still has (an agent deleted with its branch kept) is taken too
    if (!wanted) for (const a of await switchyardBranches(row.repo)) inUse.add(a);
    for (;;) {
      const alias = wanted ?? generateAlias((a) => inUse.has(a) || existsSync(join(worktreesDir, a)));
      if (await this.records.insertNew({ ...row, alias, workspacePath: join(worktreesDir, alias) })) return alias;
      if (wanted) throw taken();
      inUse.add(alias);
    }
  }

  private async publish<T extends EventType>(agentId: string, type: T, payload: EventPayload<T>, write?: RowWrite): Promise<void> {
    try {
      await this.opts.bus.publish(type, payload, { agentId }, write ? { write } : {});
    } catch (err) {
      if (!this.closed) throw err;
    }
  }
}

/** The aliases of the `switchyard/<alias>` branches a repository holds (none when it is not a repository yet). */
async function switchyardBranches(repo: string | null | undefined): Promise<string[]> {
  if (!repo) return [];
  const root = await repoRootOf(repo);
  if (!root) return [];
  const refs = await git(["for-each-ref", "--format=%(refname)", "refs/heads/switchyard/"], { cwd: root }).catch(() => "");
  return refs
    .split("\n")
    .map((r) => r.trim().slice("refs/heads/switchyard/".length))
    .filter((a) => a.length > 0);
}

/** This machine and the workers connected to this server. */
function workerHosts(local: AgentHost, workers: WorkerPlacement): AgentHosts {
  const unreachable = (name: string) => new DomainError("WORKER_UNREACHABLE", `Worker ${name} is not connected to this server`, { kind: "CONFLICT" });
  return {
    local,
    of(agent) {
      if (agent.worker === null) return local;
      const host = workers.hostOf(agent.worker);
      if (!host) throw unreachable(agent.worker);
      return host;
    },
    reachable: (agent) => agent.worker === null || workers.hostOf(agent.worker) !== undefined,
  };
}
