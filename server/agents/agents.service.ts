import { cpSync, existsSync, rmSync } from "node:fs";
import { join, resolve } from "node:path";
import { SpawnAgentInput, type AgentInfo, type AgentQuestion, type QueuedMessage } from "../../shared/agents";
import type { EventPayload, EventType } from "../../shared/events";
import type { AccountsService, AcquiredAccount } from "../accounts/accounts.service";
import type { Config } from "../config";
import { uuidv7 } from "../daemons/uuidv7";
import type { Db } from "../db/client";
import { DomainError } from "../errors";
import type { EventBus } from "../events/bus";
import type { Logger } from "../log";
import { REPO_ROOT } from "../paths";
import { AgentApprovals, type ApprovalDecision } from "./agent-approvals";
import { AgentLifecycle, type AgentMove } from "./agent-lifecycle";
import { AgentMessages, AgentNotLive, UndeliveredFollowUps, type AgentMessageRow } from "./agent-messages";
import { agentToken, ensureYardShim, loadAgentSecret, verifyAgentToken } from "./agent-env";
import { launchSession, type LaunchResult } from "./agent-launch";
import { AgentRecords, LIVE_STATUSES, addUsage, mergeOf, parseUsage, toAgentInfo, type AgentPatch, type AgentRow } from "./agent-records";
import { killGroup } from "./agent-process";
import { AgentSession, type SessionOutcome } from "./agent-session";
import { generateAlias } from "./aliases";
import { decideCompletion } from "./completion";
import { clearSignal, readSignal, writeInputFiles } from "./input-files";
import { AgentLogStore } from "./log-store";
import { commitsSince, mergeWorkspace, type MergeResult, type MergeStrategy } from "./merge";
import { ownLine, toOutputLines } from "./output-view";
import { buildPrompt, commitRequestPrompt, formatAnswersAsPrompt, missingSignalPrompt } from "./prompts";
import { getProvider, listProviders, resolveCommand } from "./providers";
import type { ProviderAdapter } from "./providers/types";
import { commitsAhead, commitWorktree, createWorkspace, dirtyFiles, repoNotGit, removeWorkspace, restoreWorktree, withRepoLock, workspaceChanges, workspaceDiff, workspaceSummary, type Workspace } from "./workspace";
import { git, repoRootOf } from "./git";
import { diskUsage, isMergedInto } from "./disk";
import { Limiter } from "./limiter";

export type AgentsConfig = Pick<Config, "home" | "agentCleanup" | "agentAutocommit" | "agentResultGraceMs" | "agentSilenceMs" | "agentCommands" | "anthropicBaseUrl" | "openaiBaseUrl" | "anthropicApiKey" | "openaiApiKey">;

export interface AgentsServiceOptions {
  db: Db;
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
}

export interface OutputQuery {
  fromLine?: number;
  limit: number;
  format: "events" | "raw" | "both";
  maxFieldBytes?: number;
}

/**
 * CLI coding agents: spawn in a worktree, tail and persist output, detect completion, answer
 * questions and approvals, deliver follow-ups, and re-attach after a restart.
 */
export class AgentsService {
  readonly logs: AgentLogStore;
  readonly approvals: AgentApprovals;
  private readonly records: AgentRecords;
  private readonly messages: AgentMessages;
  private readonly lifecycle: AgentLifecycle;
  private readonly live = new Map<string, AgentSession>();
  /**
   * Worktree cleanups at idle, two at a time: each forks git a few times, and a hundred agents
   * finishing together would otherwise stall the event loop (and every live log) in one burst.
   */
  private readonly cleanups = new Limiter(2);
  /** Completion handling in progress, per agent (stop() waits for it). */
  private readonly finishing = new Map<string, Promise<void>>();
  private readonly secret: Buffer;
  private readonly worktreesDir: string;
  private binDir: string | undefined;
  private closed = false;
  private sweepTimer: NodeJS.Timeout | undefined;
  /** Wake-ups of agents waiting for an account, one at a time. */
  private waking: Promise<void> = Promise.resolve();

  constructor(private readonly opts: AgentsServiceOptions) {
    this.records = new AgentRecords(opts.db);
    this.messages = new AgentMessages(opts.db);
    this.lifecycle = new AgentLifecycle(this.records, opts.bus);
    this.logs = new AgentLogStore(opts.db);
    this.approvals = new AgentApprovals(opts.db, opts.bus);
    this.secret = loadAgentSecret(opts.config.home);
    this.worktreesDir = join(opts.config.home, "worktrees");
    opts.accounts?.onAvailable((provider) => this.wakeWaiting(provider));
  }

  /** Live agents running on an account. */
  activeOnAccount(accountId: string): number {
    return this.records.all().filter((r) => r.accountId === accountId && (LIVE_STATUSES.includes(r.status) || r.status === "waiting_for_input")).length;
  }

  private info(row: AgentRow, labels?: Map<string, string>, pending?: Map<string, number>, queued?: Map<string, QueuedMessage[]>): AgentInfo {
    const accountLabel = row.accountId ? ((labels ?? this.opts.accounts?.labels())?.get(row.accountId) ?? null) : null;
    const approvals = (pending ?? this.approvals.pendingCounts([row.id])).get(row.id) ?? 0;
    const messages = (queued ?? this.messages.queuedByAgent([row.id])).get(row.id) ?? [];
    return { ...toAgentInfo(row, approvals, messages), accountLabel };
  }

  /** The canonical id of an agent given by id or alias (AGENT_NOT_FOUND; `lenient`: unknown ones as given). */
  resolveId(idOrAlias: string, opts: { lenient?: boolean } = {}): string {
    return this.records.idOf(idOrAlias, opts);
  }

  /** The agent a token was issued to (tokens in agents' SWITCHYARD_TOKEN), or null. */
  agentOfToken(token: string): string | null {
    return verifyAgentToken(this.secret, token);
  }

  get activeCount(): number {
    return this.live.size;
  }

  list(filter: { status?: AgentInfo["status"][]; taskId?: string; phaseId?: string } = {}): AgentInfo[] {
    const labels = this.opts.accounts?.labels() ?? new Map<string, string>();
    const pending = this.approvals.pendingCounts();
    const queued = this.messages.queuedByAgent();
    return this.records
      .all()
      .filter((r) => (!filter.status || filter.status.includes(r.status)) && (!filter.taskId || r.taskId === filter.taskId) && (!filter.phaseId || r.phaseId === filter.phaseId))
      .sort((a, b) => b.createdAt - a.createdAt)
      .map((r) => this.info(r, labels, pending, queued));
  }

  /** Every provider adapter, and whether its CLI is installed here. */
  providers() {
    return listProviders().map((p) => {
      const adapter = getProvider(p.name);
      const command = resolveCommand(adapter, { repoRoot: REPO_ROOT, pathEnv: (this.opts.env ?? process.env).PATH ?? "", override: this.opts.config.agentCommands[p.name] });
      return { ...p, available: command !== null, command };
    });
  }

  get(idOrAlias: string): AgentInfo {
    return this.info(this.records.get(idOrAlias));
  }

  async spawn(raw: SpawnAgentInput): Promise<AgentInfo> {
    const input = SpawnAgentInput.parse(raw);
    const adapter = this.adapter(input.provider);
    this.commandOf(adapter);
    const preferredAccount = input.account ? this.accountFor(adapter.name, input.account) : null;
    const repo = resolve(input.repo ?? process.cwd());
    if (!existsSync(repo)) throw new DomainError("REPO_NOT_FOUND", `The repository path ${repo} does not exist`);
    if (!input.init && !(await repoRootOf(repo))) throw repoNotGit(repo);
    if (input.alias && this.records.aliasTaken(input.alias)) throw new DomainError("ALIAS_TAKEN", `The alias "${input.alias}" is in use`, { kind: "CONFLICT" });
    const alias = input.alias ?? generateAlias((a) => this.records.aliasTaken(a) || existsSync(join(this.worktreesDir, a)));
    const id = `agent_${uuidv7()}`;
    const now = Date.now();
    this.records.insert({
      id,
      alias,
      provider: adapter.name,
      mode: input.mode,
      permissionMode: input.permissionMode,
      prompt: input.prompt,
      task: input.prompt,
      model: input.model ?? null,
      repoPath: repo,
      baseRef: input.baseRef ?? null,
      workspacePath: join(this.worktreesDir, alias),
      workspaceKind: "worktree",
      configDir: join(this.agentDir(id), "config"),
      taskId: input.taskId ?? null,
      phaseId: input.phaseId ?? null,
      initiativeId: input.initiativeId ?? null,
      accountId: preferredAccount,
      createdAt: now,
      updatedAt: now,
    });
    const ws = await this.prepareWorkspace(id, alias, repo, input.baseRef, input.init ?? false);
    await writeInputFiles(ws.path, { agentId: id, alias, mode: input.mode, task: input.prompt, provider: adapter.name });
    const prompt = buildPrompt({ mode: input.mode, task: input.prompt, agentId: id, alias, workspacePath: ws.path, overridesDir: join(this.opts.config.home, "prompts") });
    const row = this.records.update(id, {
      prompt,
      workspacePath: ws.path,
      workspaceKind: ws.kind,
      branch: ws.branch,
      baseRef: ws.baseRef,
      baseCommit: ws.baseCommit,
    });
    const launched = await this.launch(row, { prompt, kind: "spawn" });
    await this.publish(id, "agent.spawned", {
      alias,
      provider: adapter.name,
      status: launched ? "running" : "waiting_for_account",
      ...(launched ? { pid: launched.process.pid } : {}),
      workspacePath: ws.path,
      branch: ws.branch,
    });
    return this.get(id);
  }

  /** The id of a registered account of the provider, by label or id. */
  private accountFor(provider: string, labelOrId: string): string {
    if (!this.opts.accounts) throw new DomainError("ACCOUNT_NOT_FOUND", "This server has no accounts configured");
    const account = this.opts.accounts.get(labelOrId);
    if (account.provider !== provider) throw new DomainError("ACCOUNT_PROVIDER_MISMATCH", `Account "${account.label}" is a ${account.provider} account, not ${provider}`);
    return account.id;
  }

  private async prepareWorkspace(id: string, alias: string, repo: string, baseRef: string | undefined, init: boolean): Promise<Workspace> {
    const setup: string[] = [];
    try {
      const ws = await createWorkspace({
        worktreesDir: this.worktreesDir,
        alias,
        repo,
        baseRef,
        init,
        onSetupOutput: (line, stream) => setup.push(ownLine("setup", stream === "stderr" ? `[stderr] ${line}` : line)),
      });
      if (setup.length > 0) await this.logs.append(id, 0, setup);
      await this.publish(id, "worktree.created", { alias, path: ws.path, branch: ws.branch, baseCommit: ws.baseCommit, kind: ws.kind });
      return ws;
    } catch (err) {
      if (setup.length > 0) await this.logs.append(id, 0, setup).catch(() => undefined);
      const reason = err instanceof Error ? err.message : String(err);
      await this.lifecycle.transition(id, "crashed", { patch: { statusReason: reason, finishedAt: Date.now(), workspaceRemoved: true }, event: { type: "agent.crashed", payload: { reason: reason.slice(0, 2000) } } });
      throw err;
    }
  }

  private adapter(name: string): ProviderAdapter {
    try {
      return getProvider(name);
    } catch (err) {
      throw new DomainError("PROVIDER_UNKNOWN", (err as Error).message);
    }
  }

  private commandOf(adapter: ProviderAdapter): string {
    const override = this.opts.config.agentCommands[adapter.name];
    const command = resolveCommand(adapter, { repoRoot: REPO_ROOT, pathEnv: (this.opts.env ?? process.env).PATH ?? "", override });
    if (!command) {
      throw new DomainError(
        "AGENT_CLI_NOT_FOUND",
        `The ${adapter.displayName} CLI ("${adapter.defaultCommand}") is not installed: install it or set SWITCHYARD_AGENT_COMMANDS=${adapter.name}=/path/to/${adapter.defaultCommand}`,
      );
    }
    return command;
  }

  private agentDir(id: string): string {
    return join(this.opts.config.home, "agents", id);
  }

  /**
   * Start the next process run (spawn or resume) of an agent and attach to it. With registered
   * accounts the run goes to the agent's account while it is usable, else to the least recently
   * used usable one (its session files copied over; a fresh session with a hand-over prompt when
   * they cannot be); with none usable the agent waits for an account and null is returned.
   */
  private async launch(row: AgentRow, how: { prompt: string; resume?: boolean; reason?: string; kind: RunKind; deliver?: AgentMessageRow[] }): Promise<LaunchResult | null> {
    const adapter = this.adapter(row.provider);
    if (row.workspaceRemoved) row = await this.restoreWorkspace(row);
    const command = this.commandOf(adapter);
    let resume = how.resume ?? false;
    let prompt = how.prompt;
    let account: AcquiredAccount | null = null;
    const accounts = this.opts.accounts;
    if (accounts?.has(row.provider)) {
      account = await accounts.acquire(row.provider, { prefer: row.accountId });
      if (!account) {
        await this.waitForAccount(row, { prompt, resume, kind: how.kind }, how.reason);
        return null;
      }
      if (account.id !== row.accountId) {
        const from = row.sessionNumber > 0 ? accounts.label(row.accountId) : null;
        const moved = row.sessionId ? ((await adapter.accounts?.copySession(row.configDir, account.configDir, row.sessionId)) ?? 0) : 0;
        if (resume && moved === 0) {
          resume = false;
          prompt = this.handoverPrompt(row, prompt);
        }
        row = this.records.update(row.id, { accountId: account.id, configDir: account.configDir, ...(resume ? {} : { sessionId: null }) });
        if (from !== null) {
          await this.appendOwn(row.id, row.sessionNumber, "note", `continuing on account ${account.label} (${resume ? "same session, its files copied over" : "a new session, handed the work so far"})`);
          await this.publish(row.id, "agent.account_switched", { from, to: account.label, reason: (how.reason ?? "usage limit").slice(0, 2000), resumedSession: resume });
        }
      }
    }
    this.binDir ??= ensureYardShim(this.opts.config.home);
    await clearSignal(row.workspacePath);
    const launched = await launchSession({
      row,
      adapter,
      command,
      prompt,
      resume,
      agentDir: this.agentDir(row.id),
      serverUrl: this.opts.serverUrl(),
      token: agentToken(this.secret, row.id),
      binDir: this.binDir,
      baseEnv: this.agentBaseEnv(account),
      endpoints: { anthropicBaseUrl: this.opts.config.anthropicBaseUrl, openaiBaseUrl: this.opts.config.openaiBaseUrl },
    });
    const patch = {
      statusReason: null,
      sessionNumber: launched.session,
      pid: launched.process.pid,
      pidStart: launched.process.startTime,
      outputPath: launched.paths.stdout,
      outputOffset: 0,
      usageSession: "{}",
      exitCode: null,
      finishedAt: null,
      pendingQuestions: "[]",
      sessionId: launched.sessionId ?? row.sessionId,
      runPrompt: how.prompt,
      runResumed: resume,
      runReason: how.kind,
    };
    const deliver = how.deliver ?? [];
    let updated: AgentRow;
    try {
      // the follow-ups this run carries are marked delivered in the same transaction as the move
      updated = await this.lifecycle.transition(row.id, "launched", { expectedVersion: row.version, patch, event: { type: "agent.status_changed", payload: { status: "running" } }, also: () => this.messages.markDelivered(deliver.map((m) => m.id)) });
    } catch (err) {
      // not recorded as running (another process moved the agent meanwhile): this run must not go on
      await killGroup(launched.process.pid, launched.process.startTime, 500).catch(() => undefined);
      throw err;
    }
    this.attach(updated, launched);
    return launched;
  }

  /** The server's environment plus the configured API keys (they may come from the config file), or the account's. */
  private agentBaseEnv(account: AcquiredAccount | null): NodeJS.ProcessEnv {
    const { anthropicApiKey, openaiApiKey } = this.opts.config;
    const env: NodeJS.ProcessEnv = {
      ...(this.opts.env ?? process.env),
      ...(anthropicApiKey ? { ANTHROPIC_API_KEY: anthropicApiKey } : {}),
      ...(openaiApiKey ? { OPENAI_API_KEY: openaiApiKey } : {}),
    };
    if (!account) return env;
    for (const name of account.unset) delete env[name];
    return { ...env, ...account.env };
  }

  /** No usable account: the agent waits with the run it was about to start, resumed when one frees up. */
  private async waitForAccount(row: AgentRow, run: { prompt: string; resume: boolean; kind: RunKind }, why?: string): Promise<void> {
    const accounts = this.opts.accounts!;
    const next = accounts.nextFreeAt(row.provider);
    const reason = next
      ? `every ${row.provider} account is at its usage limit; the first frees up at ${new Date(next).toISOString()}`
      : `no usable ${row.provider} account: add one (yard account add) or fix the invalid ones`;
    if (row.sessionNumber > 0) {
      await this.publish(row.id, "agent.account_switched", { from: accounts.label(row.accountId), to: null, reason: (why ?? reason).slice(0, 2000), resumedSession: false });
    }
    await this.lifecycle.transition(row.id, "account_awaited", {
      patch: { statusReason: reason, runPrompt: run.prompt, runResumed: run.resume, runReason: run.kind, pid: null },
      event: { type: "agent.status_changed", payload: { status: "waiting_for_account", reason } },
    });
  }

  /** Agents waiting for an account of the provider get their run started, one by one. */
  private wakeWaiting(provider: string): void {
    this.waking = this.waking.then(async () => {
      for (const row of this.records.all()) {
        if (this.closed || row.status !== "waiting_for_account" || row.provider !== provider) continue;
        try {
          const launched = await this.launch(row, { prompt: row.runPrompt ?? row.prompt, resume: row.runResumed, reason: "an account became available", kind: (row.runReason as RunKind | null) ?? "spawn" });
          if (!launched) break; // still none free: the rest wait too
          if (row.runResumed) await this.publish(row.id, "agent.resumed", { session: launched.session, reason: "account_switch", pid: launched.process.pid });
        } catch (err) {
          this.opts.log.error({ err, agentId: row.id }, "starting an agent that waited for an account failed");
        }
      }
    });
  }

  /** A fresh session's prompt carrying the work so far, when a session cannot move between accounts. */
  private handoverPrompt(row: AgentRow, prompt: string): string {
    const total = this.logs.totalLines(row.id);
    const page = this.output(row.id, { fromLine: Math.max(0, total - 400), limit: 400, format: "events" });
    const notes: string[] = [];
    for (const line of page.lines) {
      for (const e of line.events) {
        if (e.kind === "text") notes.push(e.text);
        else if (e.kind === "tool_call") notes.push(`[tool ${e.name}] ${JSON.stringify(e.input ?? {}).slice(0, 300)}`);
      }
    }
    let transcript = notes.join("\n");
    if (transcript.length > 12_000) transcript = `…${transcript.slice(-12_000)}`;
    return [
      "You are taking over a task from an earlier session that stopped at a usage limit; your worktree holds its work (check `git status` and `git log`).",
      "",
      "# The task",
      "",
      row.prompt,
      "",
      "# What the earlier session did (its last output)",
      "",
      transcript || "(no output)",
      "",
      "# Now",
      "",
      prompt,
    ].join("\n");
  }

  private attach(row: AgentRow, launched?: LaunchResult): void {
    const adapter = this.adapter(row.provider);
    const paths = launched?.paths ?? sessionPaths(this.agentDir(row.id), row.sessionNumber);
    const session = new AgentSession({
      agentId: row.id,
      session: row.sessionNumber,
      pid: row.pid!,
      startTime: row.pidStart,
      exited: launched?.process.exited,
      stdoutPath: paths.stdout,
      stderrPath: paths.stderr,
      exitCodePath: paths.exitCode,
      signalPath: join(row.workspacePath, ".switchyard", "output", "signal.json"),
      offset: launched ? 0 : row.outputOffset,
      parser: adapter.createParser(),
      resultGraceMs: this.opts.config.agentResultGraceMs,
      silenceMs: this.opts.config.agentSilenceMs,
      pollMs: this.opts.pollMs ?? 500,
      onLines: (lines, endOffset) => this.persistLines(row.id, row.sessionNumber, lines, endOffset),
      onSessionId: (sessionId) => {
        const current = this.records.find(row.id);
        if (current && current.sessionId !== sessionId) this.records.update(row.id, { sessionId });
      },
      onUsage: (usage) => this.records.update(row.id, { usageSession: JSON.stringify(usage) }),
      // fail over at the first 429 rather than wait out the CLI's own back-off, when another account is free
      onRetryingRateLimit: () => {
        const accountId = this.records.find(row.id)?.accountId;
        return !!accountId && (this.opts.accounts?.usableCount(row.provider, accountId) ?? 0) > 0;
      },
      onExit: (outcome) => {
        this.live.delete(row.id);
        const done = this.complete(row.id, outcome)
          .catch((err) => this.opts.log.error({ err, agentId: row.id }, "agent completion failed"))
          .finally(() => this.finishing.delete(row.id));
        this.finishing.set(row.id, done);
      },
      onError: (err) => this.opts.log.warn({ err, agentId: row.id }, "agent output tailing failed"),
    });
    this.live.set(row.id, session);
    session.start();
  }

  private async persistLines(agentId: string, session: number, lines: string[], endOffset: number): Promise<void> {
    const refs = await this.logs.append(agentId, session, lines, endOffset);
    await Promise.all(refs.map((ref) => this.publish(agentId, "agent.output", ref)));
  }

  private async appendOwn(agentId: string, session: number, kind: "user_message" | "note", text: string): Promise<void> {
    await this.persistLines(agentId, session, [ownLine(kind, text)], this.records.get(agentId).outputOffset);
  }

  /** Decide what an ended process run means, and act on it. */
  private async complete(id: string, outcome: SessionOutcome): Promise<void> {
    const row = this.records.find(id);
    if (!row) return;
    const adapter = this.adapter(row.provider);
    const decision = decideCompletion({
      stopRequested: outcome.stopped,
      signal: await readSignal(row.workspacePath),
      result: outcome.result,
      rateLimit: outcome.rateLimit,
      exitCode: outcome.exitCode,
      watchdog: outcome.watchdog,
      lastText: outcome.lastText,
      stderrTail: outcome.stderrTail,
      // a commit request's run needs no signal.json: git status tells whether it worked
      canResume: adapter.resumeStyle !== "none" && row.sessionId !== null && row.runReason !== "commit_request",
      missingSignalRetries: row.missingSignalRetries,
      queuedMessages: this.messages.undelivered(id).length,
    });
    await agentTestHooks.beforeCompletionWrite?.(id);
    await this.approvals.expireFor(id, "the agent's process ended");
    const usageTotal = JSON.stringify(addUsage(parseUsage(row.usageTotal), parseUsage(row.usageSession)));
    const base = { usageTotal, usageSession: "{}", exitCode: outcome.exitCode, pid: null, finishedAt: Date.now() };
    const end = <T extends EventType>(move: AgentMove, patch: AgentPatch, type: T, payload: EventPayload<T>, guard?: () => void) =>
      this.lifecycle.transition(id, move, { expectedVersion: row.version, patch: { ...base, ...patch }, event: { type, payload }, ...(guard ? { guard } : {}) });
    switch (decision.action) {
      case "stopped":
        await end("stopped", { statusReason: decision.reason }, "agent.stopped", { reason: decision.reason });
        break;
      case "idle": {
        // the commit-request run's own "done" does not replace the task's result
        const result = row.runReason === "commit_request" && row.result ? row.result : decision.result;
        try {
          // idle only if no follow-up waits, decided in the transaction that writes idle
          await end("finished", { statusReason: decision.note ?? null, result, missingSignalRetries: 0 }, "agent.idle", { result }, () => this.messages.assertNoneWaiting(id));
        } catch (err) {
          if (!(err instanceof UndeliveredFollowUps)) throw err;
          await this.deliverFollowUps(id, base, decision.result);
          break;
        }
        await this.cleanups.run(() => this.cleanupIdle(id)).catch((err: unknown) => this.opts.log.warn({ err, agentId: id }, "worktree cleanup failed"));
        this.measureDisk(id);
        break;
      }
      case "waiting":
        await end("asked", { statusReason: null, pendingQuestions: JSON.stringify(decision.questions), missingSignalRetries: 0 }, "agent.waiting", { questions: decision.questions });
        break;
      case "rate_limited": {
        const accounts = this.opts.accounts;
        if (!accounts || !row.accountId || !accounts.has(row.provider)) {
          const reason = `${decision.reason} (register more accounts with \`yard account add\` to fail over automatically)`;
          await end("crashed", { statusReason: reason }, "agent.crashed", { reason: reason.slice(0, 2000) });
          break;
        }
        const until = decision.resetsAt ? Date.parse(decision.resetsAt) : null;
        const exhausted = await accounts.markExhausted(row.accountId, Number.isFinite(until) ? until : null, decision.reason);
        const label = accounts.label(row.accountId) ?? row.accountId;
        const updated = this.records.update(id, { ...base, statusReason: decision.reason });
        await this.appendOwn(id, row.sessionNumber, "note", `usage limit on account ${label} (until ${new Date(exhausted?.until ?? Date.now()).toISOString()}): ${decision.reason}`);
        const sameSession = adapter.resumeStyle !== "none" && row.sessionId !== null;
        const original = row.runPrompt ?? row.prompt;
        const prompt = sameSession
          ? `A usage limit interrupted your last turn; it continues now on another account. If this request is not done yet, carry it out now:\n\n${original}`
          : original;
        await this.resumeWith(updated, prompt, "account_switch", { resume: sameSession || row.runResumed, reason: decision.reason });
        break;
      }
      case "crashed":
        await end("crashed", { statusReason: decision.reason }, "agent.crashed", { reason: decision.reason.slice(0, 2000) });
        break;
      case "retry_missing_signal": {
        const updated = this.records.update(id, { ...base, missingSignalRetries: row.missingSignalRetries + 1 });
        const text = missingSignalPrompt(join(row.workspacePath, ".switchyard", "output", "signal.json"));
        await this.appendOwn(id, row.sessionNumber, "note", "finished without writing signal.json: resuming once to ask for it");
        await this.resumeWith(updated, text, "missing_signal");
        break;
      }
      case "deliver_queued":
        await this.deliverFollowUps(id, base, decision.result);
        break;
    }
  }

  /** The follow-ups that wait, in order, as the next run of the same session (marked delivered with its start). */
  private async deliverFollowUps(id: string, base: AgentPatch, result: string | null): Promise<void> {
    const waiting = this.messages.undelivered(id);
    const updated = this.records.update(id, { ...base, result, missingSignalRetries: 0 });
    const text = waiting.map((m) => m.text).join("\n\n");
    await this.appendOwn(id, updated.sessionNumber, "user_message", text);
    await this.resumeWith(updated, text, "message", { deliver: waiting });
  }

  private async resumeWith(
    row: AgentRow,
    prompt: string,
    reason: Exclude<RunKind, "spawn">,
    opts: { resume?: boolean; reason?: string; deliver?: AgentMessageRow[] } = {},
  ): Promise<void> {
    if (this.closed) return;
    const launched = await this.launch(row, { prompt, resume: opts.resume ?? true, kind: reason, ...(opts.reason ? { reason: opts.reason } : {}), ...(opts.deliver ? { deliver: opts.deliver } : {}) });
    if (launched) await this.publish(row.id, "agent.resumed", { session: launched.session, reason, pid: launched.process.pid });
  }

  private assertResumable(row: AgentRow): void {
    const adapter = this.adapter(row.provider);
    if (row.workspaceRemoved && !this.restorable(row)) throw new DomainError("WORKSPACE_REMOVED", `Agent ${row.alias}'s workspace was removed: it cannot be resumed`, { kind: "CONFLICT" });
    if (adapter.resumeStyle === "none") throw new DomainError("NOT_RESUMABLE", `${adapter.displayName} sessions cannot be resumed`, { kind: "CONFLICT" });
    if (!row.sessionId) throw new DomainError("NOT_RESUMABLE", `Agent ${row.alias} has no session id to resume`, { kind: "CONFLICT" });
  }

  /** Answer the agent's pending questions; it resumes on the same session in the same worktree. */
  async resume(idOrAlias: string, answers: Record<string, string>): Promise<AgentInfo> {
    const row = this.records.get(idOrAlias);
    if (row.status !== "waiting_for_input") {
      throw new DomainError("AGENT_NOT_WAITING", `Agent ${row.alias} is ${row.status}, not waiting for answers`, { kind: "CONFLICT" });
    }
    const questions = JSON.parse(row.pendingQuestions) as AgentQuestion[];
    const missing = questions.filter((q) => !answers[q.id]?.trim()).map((q) => q.id);
    if (missing.length > 0) throw new DomainError("ANSWERS_MISSING", `Answer every question: missing ${missing.join(", ")}`, { details: { missing } });
    this.assertResumable(row);
    const prompt = formatAnswersAsPrompt(questions, answers);
    await this.appendOwn(row.id, row.sessionNumber, "user_message", prompt);
    await this.resumeWith(row, prompt, "answers");
    return this.get(row.id);
  }

  /** A follow-up: resumes an idle agent now; for a running one it is queued until its next idle point. */
  /**
   * A follow-up: for a live agent it becomes a row (delivered in order at its next idle point,
   * never lost: the agent goes idle only in a transaction that finds none waiting); otherwise it
   * resumes the agent now. A move of the agent in between (it went idle, another run started) is
   * met by trying again on what the agent is then.
   */
  async message(idOrAlias: string, text: string): Promise<{ delivered: "now" | "queued"; agent: AgentInfo }> {
    const id = this.records.idOf(idOrAlias);
    for (let attempt = 1; ; attempt++) {
      try {
        return await this.messageOnce(id, text);
      } catch (err) {
        const moved = err instanceof AgentNotLive || (err instanceof DomainError && err.code === "AGENT_VERSION_CONFLICT");
        if (!moved || attempt >= 5) throw err;
      }
    }
  }

  private async messageOnce(id: string, text: string): Promise<{ delivered: "now" | "queued"; agent: AgentInfo }> {
    const row = this.records.get(id);
    if (LIVE_STATUSES.includes(row.status)) {
      const messageId = `msg_${uuidv7()}`;
      const queued = this.messages.undelivered(row.id).length + 1;
      await this.publish(row.id, "agent.message_queued", { messageId, text: text.slice(0, 2000), queued }, () => void this.messages.enqueueIfLive(row.id, text, messageId));
      return { delivered: "queued", agent: this.get(row.id) };
    }
    if (row.status === "waiting_for_account") throw new DomainError("AGENT_WAITING_FOR_ACCOUNT", `Agent ${row.alias} waits for an account`, { kind: "CONFLICT" });
    this.assertResumable(row);
    await this.appendOwn(row.id, row.sessionNumber, "user_message", text);
    await this.resumeWith(row, text, "message");
    return { delivered: "now", agent: this.get(row.id) };
  }

  /**
   * Remove a finished agent's worktree now (its branch is kept when it has commits). Refused
   * (WORKTREE_DIRTY, with the files) when work is uncommitted, unless `discard` says to throw it away.
   */
  async cleanup(idOrAlias: string, opts: { discard?: boolean } = {}): Promise<AgentInfo> {
    const row = this.records.get(idOrAlias);
    if (LIVE_STATUSES.includes(row.status)) throw new DomainError("AGENT_RUNNING", `Agent ${row.alias} is still working: clean up once it is done`, { kind: "CONFLICT" });
    if (row.workspaceRemoved || row.workspaceKind !== "worktree") return this.get(row.id);
    const ws = this.workspaceOf(row);
    const dirty = existsSync(ws.path) ? await dirtyFiles(ws) : [];
    if (dirty.length > 0 && !opts.discard) {
      throw new DomainError("WORKTREE_DIRTY", `The worktree ${ws.path} has uncommitted changes: ${dirty.slice(0, 10).join(", ")}${dirty.length > 10 ? ", ..." : ""}`, { kind: "CONFLICT", details: { files: dirty } });
    }
    if (dirty.length > 0) await this.appendOwn(row.id, row.sessionNumber, "note", `uncommitted work discarded by a user: ${dirty.slice(0, 20).join(", ")}`);
    const ahead = await commitsAhead(ws);
    await removeWorkspace(ws, { force: true, deleteBranch: ahead === 0 });
    this.records.update(row.id, { workspaceRemoved: true, cleanupWarning: null, diskBytes: null });
    await this.publish(row.id, "worktree.removed", { alias: row.alias, path: ws.path, branch: ahead > 0 ? ws.branch : null, reason: dirty.length > 0 ? "cleaned up by a user, uncommitted work discarded" : "cleaned up by a user" });
    return this.get(row.id);
  }

  /** Resolves once the agent's last process run has been handled (result recorded, cleanup decided). */
  async settled(idOrAlias: string): Promise<AgentInfo> {
    const row = this.records.get(idOrAlias);
    await this.finishing.get(row.id);
    return this.get(row.id);
  }

  async stop(idOrAlias: string): Promise<AgentInfo> {
    const row = this.records.get(idOrAlias);
    const session = this.live.get(row.id);
    if (session) {
      await session.stop();
      await this.finishing.get(row.id);
      return this.get(row.id);
    }
    if (row.status === "stopped" || row.status === "crashed") return this.get(row.id);
    await this.lifecycle.transition(row.id, "stopped", {
      expectedVersion: row.version,
      patch: { statusReason: "stopped by a user", pid: null, finishedAt: Date.now() },
      event: { type: "agent.stopped", payload: { reason: "stopped by a user" } },
    });
    await this.approvals.expireFor(row.id, "the agent was stopped");
    return this.get(row.id);
  }

  /** Stop it, remove its workspace (refused when dirty unless forced) and its record; logs stay. */
  async delete(idOrAlias: string, opts: { force?: boolean } = {}): Promise<void> {
    const row = this.records.get(idOrAlias);
    if (this.live.has(row.id)) await this.stop(row.id);
    if (!row.workspaceRemoved) {
      await removeWorkspace(this.workspaceOf(row), { force: opts.force ?? false });
      await this.publish(row.id, "worktree.removed", { alias: row.alias, path: row.workspacePath, branch: row.branch });
    }
    this.records.remove(row.id);
    this.messages.forget(row.id);
    this.logs.forget(row.id);
    rmSync(this.agentDir(row.id), { recursive: true, force: true });
    await this.publish(row.id, "agent.deleted", { alias: row.alias });
  }

  /** A worktree removed by cleanup (not by a failed spawn): its repository is still there. */
  private restorable(row: AgentRow): boolean {
    return row.workspaceKind === "worktree" && !!row.repoPath && !!row.baseCommit && !!row.branch && existsSync(row.repoPath);
  }

  private async restoreWorkspace(row: AgentRow): Promise<AgentRow> {
    if (!this.restorable(row)) throw new DomainError("WORKSPACE_REMOVED", `Agent ${row.alias}'s workspace was removed: it cannot be resumed`, { kind: "CONFLICT" });
    const ws = this.workspaceOf(row);
    await restoreWorktree(ws);
    await writeInputFiles(ws.path, { agentId: row.id, alias: row.alias, mode: row.mode as AgentInfo["mode"], task: row.task, provider: row.provider });
    await this.publish(row.id, "worktree.created", { alias: row.alias, path: ws.path, branch: ws.branch, baseCommit: ws.baseCommit, kind: "worktree" });
    await this.appendOwn(row.id, row.sessionNumber, "note", `worktree restored at ${ws.path} on ${ws.branch}`);
    return this.records.update(row.id, { workspaceRemoved: false, commitRequests: 0, cleanupWarning: null });
  }

  /**
   * After an agent goes idle, its work lands, then its worktree is cleaned up. Uncommitted work
   * gets one resume asking the agent to commit (when its CLI can resume); still uncommitted after
   * that, or when the CLI cannot be asked, Switchyard commits it on the agent's branch
   * (SWITCHYARD_AGENT_AUTOCOMMIT=on) or keeps it with a warning (off). Then a clean worktree is
   * removed (its branch kept only with commits; archived first in debug mode) unless cleanup is
   * off. Uncommitted work is never deleted.
   */
  private async cleanupIdle(id: string): Promise<void> {
    const cleanup = this.opts.config.agentCleanup;
    const autocommit = this.opts.config.agentAutocommit === "on";
    if ((cleanup === "off" && !autocommit) || this.closed) return;
    const row = this.records.get(id);
    if (row.status !== "idle" || row.workspaceKind !== "worktree" || row.workspaceRemoved || !existsSync(row.workspacePath)) return;
    const ws = this.workspaceOf(row);
    const dirty = await dirtyFiles(ws);
    if (dirty.length > 0) {
      if (row.commitRequests < 1 && this.adapter(row.provider).resumeStyle !== "none" && row.sessionId) {
        const updated = this.records.update(id, { commitRequests: row.commitRequests + 1, cleanupWarning: null });
        await this.appendOwn(id, row.sessionNumber, "note", `${dirty.length} uncommitted path(s) in the worktree: resuming once to ask for a commit`);
        await this.resumeWith(updated, commitRequestPrompt({ workspacePath: ws.path, branch: ws.branch, paths: dirty, overridesDir: join(this.opts.config.home, "prompts") }), "commit_request");
        return;
      }
      const failed = autocommit ? await this.commitForAgent(row, ws) : "SWITCHYARD_AGENT_AUTOCOMMIT is off";
      if (failed !== null) {
        await this.keepDirty(row, ws, dirty, failed);
        return;
      }
    }
    if (cleanup === "off") return;
    await this.removeCleanWorktree(row, cleanup === "debug" ? "archive" : "remove", "clean after the agent finished");
  }

  /** Commit what the agent left on its branch, as the agent: null when it landed, else why not. */
  private async commitForAgent(row: AgentRow, ws: Workspace): Promise<string | null> {
    try {
      const { commit, files } = await commitWorktree(ws, { message: autocommitMessage(row), author: agentIdentity(row) });
      this.records.update(row.id, { cleanupWarning: null });
      const shown = `${files.slice(0, 10).join(", ")}${files.length > 10 ? `, … (${files.length} in all)` : ""}`;
      await this.appendOwn(row.id, row.sessionNumber, "note", `the agent left ${files.length} path(s) uncommitted: Switchyard committed them on ${ws.branch} as ${commit.slice(0, 10)} (${shown})`);
      await this.publish(row.id, "worktree.committed", { alias: row.alias, branch: ws.branch ?? "", commit, files: files.slice(0, 100), fileCount: files.length });
      return null;
    } catch (err) {
      const reason = err instanceof Error ? err.message : String(err);
      this.opts.log.warn({ err, agentId: row.id }, "committing an agent's work failed");
      return `committing it failed: ${reason}`;
    }
  }

  private async keepDirty(row: AgentRow, ws: Workspace, dirty: string[], why: string): Promise<void> {
    const shown = `${dirty.slice(0, 10).join(", ")}${dirty.length > 10 ? `, … (${dirty.length} in all)` : ""}`;
    const warning = `Uncommitted work was left in ${ws.path} (${shown}; ${why}); the worktree is kept until it is committed (there, or by asking the agent) or discarded (Discard and clean up; yard agent cleanup ${row.alias} --discard).`;
    this.records.update(row.id, { cleanupWarning: warning });
    await this.publish(row.id, "worktree.kept", { alias: row.alias, path: ws.path, dirty: dirty.slice(0, 100), reason: warning.slice(0, 2000) });
  }

  /** Disk used by a finished agent's worktree, in the background (the list shows it). */
  private measureDisk(id: string): void {
    const row = this.records.find(id);
    if (!row || row.workspaceRemoved || !existsSync(row.workspacePath)) return;
    void diskUsage(row.workspacePath)
      .then((diskBytes) => {
        if (!this.closed && this.records.find(id)) this.records.update(id, { diskBytes, diskCheckedAt: Date.now() });
      })
      .catch(() => undefined);
  }

  private async removeCleanWorktree(row: AgentRow, how: "remove" | "archive", reason: string): Promise<void> {
    const ws = this.workspaceOf(row);
    const ahead = await commitsAhead(ws);
    if (how === "archive") {
      const target = join(this.opts.config.home, "archive", `${row.alias}-${Date.now()}`);
      cpSync(ws.path, target, { recursive: true, filter: (src) => src !== join(ws.path, ".git") });
    }
    await removeWorkspace(ws, { deleteBranch: ahead === 0 });
    this.records.update(row.id, { workspaceRemoved: true, cleanupWarning: null, diskBytes: null });
    const kept = ahead > 0 ? `branch ${ws.branch} kept with ${ahead} commit(s)` : "no commits, so its branch was deleted too";
    await this.appendOwn(row.id, row.sessionNumber, "note", `worktree ${how === "archive" ? "archived and " : ""}removed (${reason}); ${kept}`);
    await this.publish(row.id, "worktree.removed", { alias: row.alias, path: ws.path, branch: ahead > 0 ? ws.branch : null, reason });
  }

  /**
   * The periodic sweep: disk used per worktree; worktrees of finished agents whose branch is
   * merged into its base and that are clean are removed; stale worktree metadata is pruned.
   */
  async sweep(): Promise<Array<{ agentId: string; alias: string; path: string; diskBytes: number | null; removed: boolean; note?: string }>> {
    const report: Array<{ agentId: string; alias: string; path: string; diskBytes: number | null; removed: boolean; note?: string }> = [];
    const repos = new Set<string>();
    for (const row of this.records.all()) {
      if (row.workspaceKind !== "worktree" || row.workspaceRemoved || !existsSync(row.workspacePath)) continue;
      if (row.repoPath) repos.add(row.repoPath);
      const diskBytes = await diskUsage(row.workspacePath);
      this.records.update(row.id, { diskBytes, diskCheckedAt: Date.now() });
      const entry: (typeof report)[number] = { agentId: row.id, alias: row.alias, path: row.workspacePath, diskBytes, removed: false };
      report.push(entry);
      if (LIVE_STATUSES.includes(row.status) || row.status === "waiting_for_input" || row.status === "waiting_for_account") continue;
      const ws = this.workspaceOf(row);
      if (!ws.branch || !row.baseRef || (await dirtyFiles(ws)).length > 0) continue;
      const into = (await isMergedInto(row.repoPath!, ws.branch, row.baseRef)) ? row.baseRef : await this.mergedByRecord(row, ws);
      if (!into) continue;
      await this.removeCleanWorktree(row, this.opts.config.agentCleanup === "debug" ? "archive" : "remove", `its branch is merged into ${into}`);
      entry.removed = true;
      entry.note = `merged into ${into}`;
    }
    for (const repo of repos) await withRepoLock(repo, () => git(["worktree", "prune"], { cwd: repo })).catch(() => undefined);
    return report;
  }

  /**
   * A squash or rebase leaves the branch outside its target's history: the merge record tells it
   * is merged when nothing came on the branch since and the merge's commit is still on the target.
   */
  private async mergedByRecord(row: AgentRow, ws: Workspace): Promise<string | null> {
    const m = mergeOf(row);
    if (!m || !row.repoPath || (await commitsSince(ws, m.head)) !== 0) return null;
    return (await isMergedInto(row.repoPath, m.commit, m.into, { commit: true })) ? m.into : null;
  }

  private workspaceOf(row: AgentRow): Workspace {
    return {
      kind: row.workspaceKind,
      path: row.workspacePath,
      repoRoot: row.workspaceKind === "worktree" ? row.repoPath : null,
      branch: row.branch,
      baseRef: row.baseRef,
      baseCommit: row.baseCommit,
    };
  }

  async changes(idOrAlias: string) {
    const row = this.records.get(idOrAlias);
    if (row.workspaceRemoved && !this.restorable(row)) throw new DomainError("WORKSPACE_REMOVED", `Agent ${row.alias}'s workspace was removed`, { kind: "CONFLICT" });
    const ws = this.workspaceOf(row);
    const [changes, commitsSinceMerge] = await Promise.all([workspaceChanges(ws), commitsSince(ws, row.mergedHead)]);
    return { ...changes, commitsSinceMerge };
  }

  /** Merge the agent's branch into a local branch (default: the one it started from). */
  async merge(idOrAlias: string, opts: { into?: string; strategy?: MergeStrategy } = {}): Promise<MergeResult> {
    const row = this.records.get(idOrAlias);
    if (row.workspaceRemoved && !this.restorable(row)) throw new DomainError("WORKSPACE_REMOVED", `Agent ${row.alias}'s workspace was removed`, { kind: "CONFLICT" });
    if (LIVE_STATUSES.includes(row.status)) throw new DomainError("AGENT_RUNNING", `Agent ${row.alias} is still working: merge once it is done`, { kind: "CONFLICT" });
    const result = await mergeWorkspace(this.workspaceOf(row), {
      ...opts,
      // read and recorded under the repository lock: two merges at once cannot both bring the work in
      previous: () => mergeOf(this.records.get(row.id)),
      onMerged: (r) => void this.records.update(row.id, { mergedInto: r.into, mergeStrategy: r.strategy, mergeCommit: r.commit, mergedHead: r.head, mergedAt: Date.now() }),
    });
    if (result.merged && result.commit) {
      await this.publish(row.id, "worktree.merged", { alias: row.alias, branch: result.branch, into: result.into, commit: result.commit, strategy: result.strategy, ...(result.head ? { head: result.head } : {}) });
    }
    return result;
  }

  /** Changes and a capped diff at once (a CLI step's hand-over to the next step). */
  async summary(idOrAlias: string, maxBytes: number) {
    const row = this.records.get(idOrAlias);
    if (row.workspaceRemoved && !this.restorable(row)) throw new DomainError("WORKSPACE_REMOVED", `Agent ${row.alias}'s workspace was removed`, { kind: "CONFLICT" });
    return workspaceSummary(this.workspaceOf(row), { maxBytes });
  }

  async diff(idOrAlias: string, maxBytes?: number) {
    const row = this.records.get(idOrAlias);
    if (row.workspaceRemoved && !this.restorable(row)) throw new DomainError("WORKSPACE_REMOVED", `Agent ${row.alias}'s workspace was removed`, { kind: "CONFLICT" });
    return workspaceDiff(this.workspaceOf(row), maxBytes ? { maxBytes } : {});
  }

  /** A page of an agent's output: parsed events and/or raw lines, by line range (or the tail). */
  output(idOrId: string, q: OutputQuery) {
    // logs outlive a deleted agent: they stay readable by its id (parsed by the provider that wrote them)
    const row = this.records.find(idOrId) ?? (this.logs.totalLines(idOrId) > 0 ? { id: idOrId, provider: this.logs.providerOf(idOrId) } : this.records.get(idOrId));
    const total = this.logs.totalLines(row.id);
    const limit = Math.min(Math.max(q.limit, 1), 5000);
    const fromLine = q.fromLine ?? Math.max(0, total - limit);
    const stored = this.logs.readLines(row.id, fromLine, limit);
    const lines = toOutputLines(stored, this.adapter(row.provider).createParser(), { format: q.format, maxFieldBytes: q.maxFieldBytes ?? 64 * 1024 });
    return { agentId: row.id, totalLines: total, fromLine, lines, sessions: this.logs.sessions(row.id) };
  }

  /** The lines of one persisted chunk, parsed (what an `agent.output` event points at). */
  chunkOutput(agentId: string, chunkId: number, format: OutputQuery["format"] = "events") {
    const chunk = this.logs.chunk(chunkId);
    if (!chunk || chunk.agentId !== agentId) return [];
    const provider = this.records.find(agentId)?.provider ?? this.logs.providerOf(agentId);
    const stored = chunk.lines.map((raw, i) => ({ line: chunk.firstLine + i, session: chunk.session, raw }));
    return toOutputLines(stored, this.adapter(provider).createParser(), { format, maxFieldBytes: 64 * 1024 });
  }

  /** Called by the permission MCP endpoint: waits for a human's decision (never times out). */
  requestApproval(agentId: string, toolName: string, input: unknown): Promise<ApprovalDecision> {
    return this.approvals.request(this.resolveId(agentId), toolName, input);
  }

  /** After a restart: re-attach to live processes; finish the dead ones from their output. */
  async recover(): Promise<{ reattached: string[]; finished: string[] }> {
    const reattached: string[] = [];
    const finished: string[] = [];
    await this.approvals.expireAll("the server restarted while the agent waited");
    for (const row of this.records.all()) {
      // follow-ups stored the old way (a JSON column) become rows
      if (row.queuedMessages !== "[]") {
        this.messages.importLegacy(row.id, parseQueued(row.queuedMessages));
        this.records.update(row.id, { queuedMessages: "[]" });
      }
      if (!LIVE_STATUSES.includes(row.status)) continue;
      if (!row.pid || !row.outputPath) {
        const reason = "the server stopped while the agent was starting";
        await this.lifecycle.transition(row.id, "crashed", { expectedVersion: row.version, patch: { statusReason: reason, finishedAt: Date.now() }, event: { type: "agent.crashed", payload: { reason } } });
        finished.push(row.id);
        continue;
      }
      this.attach(row);
      reattached.push(row.id);
      await this.publish(row.id, "agent.status_changed", { status: row.status, reason: "re-attached after a server restart" });
    }
    // a first measure soon after start, then every SWEEP_INTERVAL_MS
    setTimeout(() => {
      if (!this.closed) this.sweep().catch((err: unknown) => this.opts.log.warn({ err }, "worktree sweep failed"));
    }, 30_000).unref();
    this.sweepTimer ??= setInterval(() => {
      this.sweep().catch((err: unknown) => this.opts.log.warn({ err }, "worktree sweep failed"));
    }, SWEEP_INTERVAL_MS);
    this.sweepTimer.unref();
    // agents that waited for an account: one may have freed up while we were down
    for (const provider of new Set(this.records.all().filter((r) => r.status === "waiting_for_account").map((r) => r.provider))) this.wakeWaiting(provider);
    return { reattached, finished };
  }

  /** Server shutdown: stop watching agents (they keep running and are re-attached at start). */
  async shutdown(): Promise<void> {
    this.closed = true;
    clearInterval(this.sweepTimer);
    await Promise.all([...this.live.values()].map((s) => s.detach()));
    this.live.clear();
    await Promise.all([...this.finishing.values()]);
    this.logs.flush();
  }

  private async publish<T extends EventType>(agentId: string, type: T, payload: EventPayload<T>, write?: () => void): Promise<void> {
    try {
      await this.opts.bus.publish(type, payload, { agentId }, write ? { write } : {});
    } catch (err) {
      if (!this.closed) throw err;
    }
  }
}

function parseQueued(json: string): QueuedMessage[] {
  try {
    const v = JSON.parse(json) as unknown;
    return Array.isArray(v) ? (v as QueuedMessage[]).filter((m) => m && typeof m.text === "string" && typeof m.id === "string") : [];
  } catch {
    return [];
  }
}

/** Test support, never set in production: runs in completion between reading the agent and writing its outcome. */
export const agentTestHooks: { beforeCompletionWrite?: (agentId: string) => Promise<void> } = {};

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

/** How often worktrees are measured and merged clean ones removed. */
const SWEEP_INTERVAL_MS = 10 * 60_000;

export type RunKind = "spawn" | "answers" | "message" | "missing_signal" | "account_switch" | "commit_request";

export function sessionPaths(agentDir: string, session: number) {
  return {
    stdout: join(agentDir, `session-${session}.jsonl`),
    stderr: join(agentDir, `session-${session}.stderr.log`),
    exitCode: join(agentDir, `session-${session}.exit`),
  };
}

