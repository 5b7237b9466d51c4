import { dirname, join } from "node:path";
import type { EventPayload, EventType } from "../../shared/events";
import type { AcquiredAccount } from "../accounts/accounts.service";
import type { TxDb } from "../db/store";
import { DomainError } from "../errors";
import { REPO_ROOT } from "../paths";
import { adapterOf, agentDir, parsePlacement, workspaceOf, type AgentContext } from "./agent-context";
import { git } from "./git";
import { agentToken } from "./agent-env";
import type { AgentHost, SessionRef } from "./agent-host";
import { launchSession, type LaunchResult } from "./agent-launch";
import type { AgentMove } from "./agent-lifecycle";
import { UndeliveredFollowUps, type AgentMessageRow } from "./agent-messages";
import type { AgentOutput } from "./agent-output";
import { addUsage, LIVE_STATUSES, type AgentPatch, type AgentRow, type RunKind } from "./agent-records";
import { AgentSession, type SessionOutcome } from "./agent-session";
import type { AgentWorkspaces } from "./agent-workspaces";
import { decideCompletion } from "./completion";
import { signalPathOf } from "./input-files";
import { agentTestHooks } from "./agent-test-hooks";
import { Limiter } from "./limiter";
import { sessionPaths } from "./local-host";
import { missingSignalPrompt } from "./prompts";
import { getProvider, listProviders, resolveCommand } from "./providers";
import type { ProviderAdapter } from "./providers/types";
import { fetchAgentBranch, mirrorUrlOf } from "./repo-mirrors";

export interface RunRequest {
  prompt: string;
  resume?: boolean;
  /** Why (an account switch's reason, shown to the user). */
  reason?: string;
  kind: RunKind;
  /** Follow-ups this run carries: marked delivered in the transaction that records it running. */
  deliver?: AgentMessageRow[];
}

/**
 * An agent's process runs: start one on the agent's host (on an account that can take it, or
 * wait for one), watch it through its session, and decide what its end means (idle, questions,
 * a retry, follow-ups, another account), every status change through the lifecycle's door.
 */
export class AgentRunner {
  private readonly live = new Map<string, AgentSession>();
  /** Completion handling in progress, per agent (stop() waits for it). */
  private readonly finishing = new Map<string, Promise<void>>();
  /** What live runs reported (session ids, usage) being written, per agent, in order. */
  private readonly recording = new Map<string, Promise<void>>();
  /**
   * Worktree cleanups at idle, two at a time: each forks git a few times, and a hundred agents
   * finishing together would otherwise stall the event loop (and every live log) in one burst.
   */
  private readonly cleanups = new Limiter(2);
  /** Wake-ups of agents waiting for an account, one at a time. */
  private waking: Promise<void> = Promise.resolve();
  private workspaces!: AgentWorkspaces;
  /** The server is shutting down: completions waiting for a worker give up (the next start picks them up). */
  private detaching = false;

  constructor(
    private readonly ctx: AgentContext,
    private readonly output: AgentOutput,
    private readonly opts: { secret: Buffer; serverUrl: () => string; pollMs: number },
  ) {}

  /** The workspaces part (built after the runner: it resumes agents through it). */
  useWorkspaces(workspaces: AgentWorkspaces): void {
    this.workspaces = workspaces;
  }

  get liveCount(): number {
    return this.live.size;
  }

  isLive(id: string): boolean {
    return this.live.has(id);
  }

  /** The id of a registered account of the provider, by label or id. */
  async accountFor(provider: string, labelOrId: string): Promise<string> {
    if (!this.ctx.accounts) throw new DomainError("ACCOUNT_NOT_FOUND", "This server has no accounts configured");
    const account = await this.ctx.accounts.get(labelOrId);
    if (account.provider !== provider) throw new DomainError("ACCOUNT_PROVIDER_MISMATCH", `Account "${account.label}" is a ${account.provider} account, not ${provider}`);
    return account.id;
  }

  /** Refused (WORKSPACE_REMOVED, NOT_RESUMABLE) when the agent's session cannot go on. */
  assertResumable(row: AgentRow): void {
    const adapter = adapterOf(row.provider);
    this.workspaces.assertAvailable(row, ": it cannot be resumed");
    if (adapter.resumeStyle === "none") throw new DomainError("NOT_RESUMABLE", `${adapter.displayName} sessions cannot be resumed`, { kind: "CONFLICT" });
    if (!row.sessionId) throw new DomainError("NOT_RESUMABLE", `Agent ${row.alias} has no session id to resume`, { kind: "CONFLICT" });
  }

  /** Every provider adapter, and whether its CLI is installed here. */
  providers() {
    return listProviders().map((p) => {
      const command = resolveCommand(getProvider(p.name), { repoRoot: REPO_ROOT, pathEnv: this.ctx.env.PATH ?? "", override: this.ctx.config.agentCommands[p.name] });
      return { ...p, available: command !== null, command };
    });
  }

  /** The CLI of a provider on a host: this machine's (commandOf), or what the worker reported. */
  commandOn(host: AgentHost, adapter: ProviderAdapter): string {
    if (!host.providerCommand) return this.commandOf(adapter);
    const command = host.providerCommand(adapter.name);
    if (!command) throw new DomainError("AGENT_CLI_NOT_FOUND", `${adapter.displayName} ("${adapter.defaultCommand}") is not installed on worker ${host.name}`);
    return command;
  }

  /** The CLI of a provider on this machine, or AGENT_CLI_NOT_FOUND saying how to get it. */
  commandOf(adapter: ProviderAdapter): string {
    const override = this.ctx.config.agentCommands[adapter.name];
    const command = resolveCommand(adapter, { repoRoot: REPO_ROOT, pathEnv: this.ctx.env.PATH ?? "", override });
    if (!command) {
      throw new DomainError(
        "AGENT_CLI_NOT_FOUND",
        `${adapter.displayName} ("${adapter.defaultCommand}") is not installed: install it or set SWITCHYARD_AGENT_COMMANDS=${adapter.name}=/path/to/${adapter.defaultCommand}`,
      );
    }
    return command;
  }

  /**
   * Start the next process run (spawn or resume) of an agent and attach to it. With registered
   * accounts the run goes to the agent's account while it is usable, else to the least recently
   * used usable one (its session files copied over; a fresh session with a hand-over prompt when
   * they cannot be); with none usable the agent waits for an account and null is returned.
   */
  async launch(row: AgentRow, how: RunRequest): Promise<LaunchResult | null> {
    const adapter = adapterOf(row.provider);
    let resume = how.resume ?? false;
    let prompt = how.prompt;
    // its worker is gone (interrupted when it was lost, or queued since for want of another): it
    // goes on elsewhere, from its pushed branch, in a new session; it waits queued while no worker can take it
    const stranded = row.status === "queued" ? row.sessionNumber > 0 : !LIVE_STATUSES.includes(row.status) && !this.ctx.hosts.reachable(row);
    if (row.worker !== null && stranded && this.ctx.place) {
      const lost = row.worker;
      const moved = await this.relocate(row, { prompt, kind: how.kind });
      if (!moved) return null;
      row = moved;
      resume = false;
      prompt = await this.handoverPrompt(row, prompt, `its worker ${lost} was lost`);
    }
    if (row.workspaceRemoved) row = await this.workspaces.restore(row);
    const host = this.ctx.hosts.of(row);
    const command = this.commandOn(host, adapter);
    let account: AcquiredAccount | null = null;
    const accounts = this.ctx.accounts;
    if (accounts && (await accounts.has(row.provider))) {
      account = await accounts.acquire(row.provider, { prefer: row.accountId });
      if (!account) {
        await this.waitForAccount(row, { prompt, resume, kind: how.kind }, how.reason);
        return null;
      }
      // on a worker the agent keeps its own config dir there: only the account's credential travels into it
      const remote = host.serverUrl !== undefined;
      if (account.id !== row.accountId) {
        const from = row.sessionNumber > 0 ? await accounts.label(row.accountId) : null;
        const moved = remote ? 1 : row.sessionId ? await host.copySession({ provider: adapter.name, fromDir: row.configDir, toDir: account.configDir, sessionId: row.sessionId }) : 0;
        if (resume && moved === 0) {
          resume = false;
          prompt = await this.handoverPrompt(row, prompt, "its account reached a usage limit");
        }
        row = await this.ctx.records.update(row.id, { accountId: account.id, ...(remote ? {} : { configDir: account.configDir }), ...(resume ? {} : { sessionId: null }) });
        if (from !== null) {
          await this.output.note(row.id, row.sessionNumber, "note", `continuing on account ${account.label} (${resume ? "same session, its files copied over" : "a new session, handed the work so far"})`);
          await this.ctx.publish(row.id, "agent.account_switched", { from, to: account.label, reason: (how.reason ?? "usage limit").slice(0, 2000), resumedSession: resume });
        }
      }
    }
    // a worker gets this run's credential only (materialized for it here), never the account store
    if (account && host.serverUrl !== undefined) await host.writeConfigFiles(row.configDir, await accounts!.portable(account.id));
    await host.clearSignal(row.workspacePath);
    const launched = await launchSession({
      host,
      row,
      adapter,
      command,
      prompt,
      resume,
      agentDir: agentDir(host, row.id),
      // agents on a worker reach the server the way their worker does
      serverUrl: host.serverUrl ?? this.opts.serverUrl(),
      token: agentToken(this.opts.secret, row.id),
      // a worker's agents get the worker's environment there, never this server's
      baseEnv: this.agentBaseEnv(account, host.name !== "local" && host.serverUrl !== undefined),
      endpoints: { anthropicBaseUrl: this.ctx.config.anthropicBaseUrl, openaiBaseUrl: this.ctx.config.openaiBaseUrl },
      ...(account ? { unset: account.unset } : {}),
    });
    const patch: AgentPatch = {
      statusReason: null,
      sessionNumber: launched.session,
      pid: launched.ref.pid,
      pidStart: launched.ref.startTime,
      outputPath: sessionPaths(launched.ref.dir, launched.session).stdout,
      outputOffset: 0,
      usageSession: { inputTokens: 0, outputTokens: 0 },
      exitCode: null,
      finishedAt: null,
      pendingQuestions: [],
      sessionId: launched.sessionId ?? row.sessionId,
      runPrompt: how.prompt,
      runResumed: resume,
      runReason: how.kind,
    };
    const deliver = how.deliver ?? [];
    let updated: AgentRow;
    try {
      // the follow-ups this run carries are marked delivered in the same transaction as the move
      updated = await this.ctx.lifecycle.transition(row.id, "launched", {
        expectedVersion: row.version,
        patch,
        event: { type: "agent.status_changed", payload: { status: "running" } },
        also: (tx) => this.ctx.messages.markDelivered(tx, deliver.map((m) => m.id)),
      });
    } catch (err) {
      // not recorded as running (another process moved the agent meanwhile): this run must not go on
      await host.stopSession(launched.ref, { graceMs: 500 }).catch(() => undefined);
      throw err;
    }
    this.attach(updated, launched.ref, true);
    return launched;
  }

  /**
   * The server's environment plus the configured API keys (they may come from the config file), or
   * the account's. `remote`: an agent on a worker gets only the keys or the account's variables
   * (the worker adds its own environment), never the server's.
   */
  private agentBaseEnv(account: AcquiredAccount | null, remote = false): NodeJS.ProcessEnv {
    const { anthropicApiKey, openaiApiKey } = this.ctx.config;
    const env: NodeJS.ProcessEnv = {
      ...(remote ? {} : this.ctx.env),
      ...(anthropicApiKey ? { ANTHROPIC_API_KEY: anthropicApiKey } : {}),
      ...(openaiApiKey ? { OPENAI_API_KEY: openaiApiKey } : {}),
    };
    if (!account) return env;
    for (const name of account.unset) delete env[name];
    return { ...env, ...account.env };
  }

  /** No usable account: the agent waits with the run it was about to start, resumed when one frees up. */
  private async waitForAccount(row: AgentRow, run: { prompt: string; resume: boolean; kind: RunKind }, why?: string): Promise<void> {
    const accounts = this.ctx.accounts!;
    const next = await accounts.nextFreeAt(row.provider);
    const reason = next
      ? `every ${row.provider} account is at its usage limit; the first frees up at ${new Date(next).toISOString()}`
      : `no usable ${row.provider} account: add one (yard account add) or fix the invalid ones`;
    if (row.sessionNumber > 0) {
      await this.ctx.publish(row.id, "agent.account_switched", { from: await accounts.label(row.accountId), to: null, reason: (why ?? reason).slice(0, 2000), resumedSession: false });
    }
    await this.ctx.lifecycle.transition(row.id, "account_awaited", {
      patch: { statusReason: reason, runPrompt: run.prompt, runResumed: run.resume, runReason: run.kind, pid: null },
      event: { type: "agent.status_changed", payload: { status: "waiting_for_account", reason } },
    });
  }

  /** Agents waiting for an account of the provider get their run started, one by one. */
  wakeWaiting(provider: string): void {
    this.waking = this.waking.then(async () => {
      for (const row of await this.ctx.records.all()) {
        if (this.ctx.closed() || row.status !== "waiting_for_account" || row.provider !== provider) continue;
        try {
          const launched = await this.launch(row, { prompt: row.runPrompt ?? row.prompt, resume: row.runResumed, reason: "an account became available", kind: row.runReason ?? "spawn" });
          if (!launched) break; // still none free: the rest wait too
          if (row.runResumed) await this.ctx.publish(row.id, "agent.resumed", { session: launched.session, reason: "account_switch", pid: launched.ref.pid });
        } catch (err) {
          this.ctx.log.error({ err, agentId: row.id }, "starting an agent that waited for an account failed");
        }
      }
    });
  }

  /** A fresh session's prompt carrying the work so far, when a session cannot move between accounts. */
  private async handoverPrompt(row: AgentRow, prompt: string, why: string): Promise<string> {
    return [
      `You are taking over a task from an earlier session that stopped because ${why}; your worktree holds its work (check \`git status\` and \`git log\`).`,
      "",
      "# The task",
      "",
      row.prompt,
      "",
      "# What the earlier session did (its last output)",
      "",
      (await this.output.transcript(row.id)) || "(no output)",
      "",
      "# Now",
      "",
      prompt,
    ].join("\n");
  }

  /**
   * An agent whose worker was lost, placed again (its placement, any worker but the lost one
   * when it named that one): its worktree made on the new host from its branch as last pushed to
   * this server (or its base when it never pushed), its input files written. What it had not
   * pushed stayed on the lost machine; a note in its log says so.
   */
  private async relocate(row: AgentRow, run: { prompt: string; kind: RunKind }): Promise<AgentRow | null> {
    const lost = row.worker!;
    const want = parsePlacement(row.placement);
    const placed = await this.ctx.place!(row.provider, { ...(want.worker && want.worker !== lost ? { worker: want.worker } : {}), labels: want.labels });
    if ("queued" in placed) {
      await this.queueForWorker(row, run, `worker ${lost} was lost; it goes on when a worker can take it: ${placed.queued}`);
      return null;
    }
    const host = this.ctx.hosts.of(placed);
    // a URL's mirror: the branch as the lost worker last pushed it there
    if (row.branch && mirrorUrlOf(row.repoPath)) await fetchAgentBranch(row.repoPath!, row.branch).catch(() => undefined);
    const pushed = row.repoPath && row.branch ? await git(["rev-parse", "--verify", "--quiet", `refs/heads/${row.branch}^{commit}`], { cwd: row.repoPath }).then((o) => o.trim(), () => null) : null;
    const patch = {
      worker: placed.worker,
      workerEpoch: placed.worker === null ? null : placed.epoch,
      workspacePath: join(host.home, "worktrees", row.alias),
      configDir: join(agentDir(host, row.id), "config"),
      sessionId: null,
      workspaceRemoved: false,
    };
    // a queued one is taken by one pass only (another server's may try it too)
    const moved = row.status === "queued" ? await this.ctx.records.claimQueued(row.id, row.version, patch) : await this.ctx.records.update(row.id, patch);
    if (!moved) return null;
    await host.restoreWorktree(workspaceOf(moved));
    await host.writeInputFiles(moved.workspacePath, { agentId: row.id, alias: row.alias, mode: row.mode, task: row.task, provider: row.provider });
    const where = placed.worker === null ? "this server's machine" : `worker ${placed.worker}`;
    const from = pushed ? `${row.branch} as last pushed (${pushed.slice(0, 10)})` : `its base ${row.baseCommit?.slice(0, 10) ?? ""} (it never pushed)`;
    await this.output.note(row.id, row.sessionNumber, "note", `worker ${lost} was lost: continuing on ${where} from ${from}, in a new session; work it had not pushed stayed on ${lost}`);
    return moved;
  }

  /**
   * An interrupted agent's resume that no worker can take now: queued with the reason, the run
   * it was asked for kept in its row; `resumeQueued` starts it when a place opens. Queued
   * already: only its reason follows what placement says now.
   */
  private async queueForWorker(row: AgentRow, run: { prompt: string; kind: RunKind }, reason: string): Promise<void> {
    if (row.status === "queued") {
      if (row.statusReason !== reason) await this.ctx.records.update(row.id, { statusReason: reason });
      return;
    }
    await this.ctx.lifecycle.transition(row.id, "queued", {
      expectedVersion: row.version,
      patch: { statusReason: reason, runPrompt: run.prompt, runResumed: false, runReason: run.kind, pid: null },
      event: { type: "agent.status_changed", payload: { status: "queued", reason } },
    });
  }

  /** A queued resume of an agent whose worker was lost (queueForWorker), tried again now that a place opened. */
  async resumeQueued(row: AgentRow): Promise<void> {
    const kind = row.runReason ?? "message";
    const launched = await this.launch(row, { prompt: row.runPrompt ?? "Continue the task: the earlier session was interrupted before it finished.", kind });
    if (launched) await this.ctx.publish(row.id, "agent.resumed", { session: launched.session, reason: kind === "spawn" ? "message" : kind, pid: launched.ref.pid });
  }

  /** Watch a process run through its session: `fresh` when it just started (its output is read from 0). */
  attach(row: AgentRow, ref: SessionRef, fresh: boolean): void {
    // this server watches it (a fresh run's lease is free: its agent is new, or ended here or on a stopped server)
    if (fresh) void this.ctx.claim(row.id);
    const adapter = adapterOf(row.provider);
    const host = this.ctx.hosts.of(row);
    const local = host.name === "local";
    const session = new AgentSession({
      host,
      ref,
      workspace: row.workspacePath,
      ...(local ? { localOutputPath: sessionPaths(ref.dir, ref.session).stdout } : {}),
      offset: fresh ? 0 : row.outputOffset,
      parser: adapter.createParser(),
      resultGraceMs: this.ctx.config.agentResultGraceMs,
      silenceMs: this.ctx.config.agentSilenceMs,
      pollMs: this.opts.pollMs,
      onLines: (lines, endOffset) => this.output.persist(row.id, row.sessionNumber, lines, endOffset, this.ctx.fenceOf?.(row.id)),
      onSessionId: (sessionId) =>
        this.recordMeanwhile(row.id, async () => {
          const current = await this.ctx.records.find(row.id);
          if (current && current.sessionId !== sessionId) await this.ctx.records.update(row.id, { sessionId });
        }),
      onUsage: (usage) => this.recordMeanwhile(row.id, async () => void (await this.ctx.records.update(row.id, { usageSession: usage }))),
      // fail over at the first 429 rather than wait out the CLI's own back-off, when another account is free
      onRetryingRateLimit: async () => {
        const accountId = (await this.ctx.records.find(row.id))?.accountId;
        return !!accountId && ((await this.ctx.accounts?.usableCount(row.provider, accountId)) ?? 0) > 0;
      },
      onExit: (outcome) => {
        this.live.delete(row.id);
        // what the run reported last (its session id, its usage) is written before its end is decided
        const done = this.recorded(row.id)
          .then(() => this.completeEnded(row.id, row.sessionNumber, outcome))
          .catch((err) => this.ctx.log.error({ err, agentId: row.id }, "agent completion failed"))
          .finally(() => {
            this.finishing.delete(row.id);
            // a resume started by its completion (a follow-up, an answer) holds it again
            if (!this.live.has(row.id)) void this.ctx.release(row.id);
          });
        this.finishing.set(row.id, done);
      },
      onError: quietRepeats(30_000, (err) => this.ctx.log.warn({ err, agentId: row.id }, "agent output tailing failed")),
    });
    this.live.set(row.id, session);
    session.start();
  }

  /** The session ref of a live row (re-attach after a restart). */
  private refOf(row: AgentRow): SessionRef {
    // the folder its process writes to: where it was launched (another server's data dir after a takeover)
    const dir = row.outputPath ? dirname(row.outputPath) : agentDir(this.ctx.hosts.of(row), row.id);
    return { agentId: row.id, session: row.sessionNumber, pid: row.pid!, startTime: row.pidStart, dir };
  }

  /**
   * A write a live run reports as it goes (its session id, its usage), in order with the others of
   * the agent; a failure is logged (the run goes on).
   */
  private recordMeanwhile(id: string, write: () => Promise<void>): void {
    const next = (this.recording.get(id) ?? Promise.resolve())
      .then(write)
      .catch((err: unknown) => this.ctx.log.warn({ err, agentId: id }, "recording an agent's progress failed"));
    this.recording.set(id, next);
    void next.finally(() => {
      if (this.recording.get(id) === next) this.recording.delete(id);
    });
  }

  /**
   * An agent on a worker that ran on an OAuth account: the tokens its CLI rotated in its config
   * dir there go back to the account (its old refresh token is spent), before the next run of any
   * agent on it is materialized. A failure is logged: the account may then need a new login.
   */
  private async absorbRotated(id: string): Promise<void> {
    const row = await this.ctx.records.find(id);
    const accounts = this.ctx.accounts;
    if (!row || row.worker === null || !row.accountId || !accounts || !this.ctx.hosts.reachable(row)) return;
    const host = this.ctx.hosts.of(row);
    try {
      await accounts.absorbRotated(row.accountId, (paths) => host.readConfigFiles(row.configDir, paths));
    } catch (err) {
      if (err instanceof DomainError && (err.code === "WORKER_UNREACHABLE" || err.code === "WORKER_CALL_FAILED")) throw err;
      this.ctx.log.warn({ err, agentId: id }, "reading back the tokens an agent's CLI rotated on its worker failed");
    }
  }

  /** Resolves once the writes the agent's run reported so far are done. */
  private async recorded(id: string): Promise<void> {
    await this.recording.get(id);
  }

  /**
   * An ended process run: on a worker, what it committed goes to this server's repository first;
   * then its completion. When its worker's connection is down (its end seen just before the drop,
   * or the drop in the middle of a call), the completion waits for the worker to be back: else
   * the agent would stay `running` with nothing watching it. A worker that does not come back is
   * lost and the agent interrupted meanwhile (well within the minute given here); a server shutting
   * down leaves it to the next start.
   */
  private async completeEnded(id: string, session: number, outcome: SessionOutcome): Promise<void> {
    await agentTestHooks.beforeRunCompletion?.(id);
    const giveUpAt = Date.now() + 60_000;
    for (;;) {
      try {
        await this.workspaces.publishBranch(id);
        await this.absorbRotated(id);
        return await this.complete(id, outcome);
      } catch (err) {
        const unreachable = err instanceof DomainError && (err.code === "WORKER_UNREACHABLE" || err.code === "WORKER_CALL_FAILED");
        if (!unreachable || Date.now() > giveUpAt) throw err;
        this.ctx.log.info({ agentId: id, reason: err.message }, "an agent's run ended while its worker was out of reach: completing it when the worker is back");
      }
      for (;;) {
        await new Promise((r) => setTimeout(r, 1_000));
        const row = await this.ctx.records.find(id);
        if (this.detaching || !row || !LIVE_STATUSES.includes(row.status) || row.sessionNumber !== session) return;
        if (this.ctx.hosts.reachable(row) || Date.now() > giveUpAt) break;
      }
    }
  }

  /** Decide what an ended process run means, and act on it. */
  private async complete(id: string, outcome: SessionOutcome): Promise<void> {
    const row = await this.ctx.records.find(id);
    if (!row) return;
    const adapter = adapterOf(row.provider);
    const decision = decideCompletion({
      stopRequested: outcome.stopped,
      signal: await this.ctx.hosts.of(row).readSignal(row.workspacePath),
      result: outcome.result,
      rateLimit: outcome.rateLimit,
      exitCode: outcome.exitCode,
      watchdog: outcome.watchdog,
      lastText: outcome.lastText,
      stderrTail: outcome.stderrTail,
      // a commit request's run needs no signal.json: git status tells whether it worked
      canResume: adapter.resumeStyle !== "none" && row.sessionId !== null && row.runReason !== "commit_request",
      missingSignalRetries: row.missingSignalRetries,
      queuedMessages: (await this.ctx.messages.undelivered(id)).length,
    });
    await agentTestHooks.beforeCompletionWrite?.(id);
    await this.ctx.approvals.expireFor(id, "the agent's process ended");
    const base: AgentPatch = { usageTotal: addUsage(row.usageTotal, row.usageSession), usageSession: { inputTokens: 0, outputTokens: 0 }, exitCode: outcome.exitCode, pid: null, finishedAt: Date.now() };
    const end = <T extends EventType>(move: AgentMove, patch: AgentPatch, type: T, payload: EventPayload<T>, guard?: (tx: TxDb) => Promise<void>) =>
      this.ctx.lifecycle.transition(id, move, { expectedVersion: row.version, patch: { ...base, ...patch }, event: { type, payload }, ...(guard ? { guard } : {}) });
    switch (decision.action) {
      case "stopped":
        await end("stopped", { statusReason: decision.reason }, "agent.stopped", { reason: decision.reason });
        break;
      case "idle": {
        // the commit-request run's own "done" (it needs no signal.json) replaces neither the task's result nor its note
        const commitRequest = row.runReason === "commit_request";
        const result = commitRequest && row.result ? row.result : decision.result;
        const statusReason = commitRequest ? row.statusReason : (decision.note ?? null);
        try {
          // idle only if no follow-up waits, decided in the transaction that writes idle
          await end("finished", { statusReason, result, missingSignalRetries: 0 }, "agent.went_idle", { result }, (tx) => this.ctx.messages.assertNoneWaiting(tx, id));
        } catch (err) {
          if (!(err instanceof UndeliveredFollowUps)) throw err;
          await this.deliverFollowUps(id, base, decision.result);
          break;
        }
        await this.cleanups.run(() => this.workspaces.afterIdle(id)).catch((err: unknown) => this.ctx.log.warn({ err, agentId: id }, "worktree cleanup failed"));
        this.workspaces.measureDisk(id);
        break;
      }
      case "waiting":
        await end("asked", { statusReason: null, pendingQuestions: decision.questions, missingSignalRetries: 0 }, "agent.questions_asked", { questions: decision.questions });
        break;
      case "rate_limited":
        await this.switchAccount(row, base, decision);
        break;
      case "crashed":
        await end("crashed", { statusReason: decision.reason }, "agent.crashed", { reason: decision.reason.slice(0, 2000) });
        break;
      case "retry_missing_signal": {
        const updated = await this.ctx.records.update(id, { ...base, missingSignalRetries: row.missingSignalRetries + 1 });
        await this.output.note(id, row.sessionNumber, "note", "finished without writing signal.json: resuming once to ask for it");
        await this.resumeWith(updated, missingSignalPrompt(signalPathOf(row.workspacePath)), "missing_signal");
        break;
      }
      case "deliver_queued":
        await this.deliverFollowUps(id, base, decision.result);
        break;
    }
  }

  /** A usage limit: the account rests until it resets, the run goes on on another one (or waits for one). */
  private async switchAccount(row: AgentRow, base: AgentPatch, decision: { reason: string; resetsAt?: string | undefined }): Promise<void> {
    const accounts = this.ctx.accounts;
    if (!accounts || !row.accountId || !(await accounts.has(row.provider))) {
      const reason = `${decision.reason} (register more accounts with \`yard account add\` to fail over automatically)`;
      await this.ctx.lifecycle.transition(row.id, "crashed", { expectedVersion: row.version, patch: { ...base, statusReason: reason }, event: { type: "agent.crashed", payload: { reason: reason.slice(0, 2000) } } });
      return;
    }
    const until = decision.resetsAt ? Date.parse(decision.resetsAt) : null;
    const exhausted = await accounts.markExhausted(row.accountId, Number.isFinite(until) ? until : null, decision.reason);
    const label = (await accounts.label(row.accountId)) ?? row.accountId;
    const updated = await this.ctx.records.update(row.id, { ...base, statusReason: decision.reason });
    await this.output.note(row.id, row.sessionNumber, "note", `usage limit on account ${label} (until ${new Date(exhausted?.until ?? Date.now()).toISOString()}): ${decision.reason}`);
    const sameSession = adapterOf(row.provider).resumeStyle !== "none" && row.sessionId !== null;
    const original = row.runPrompt ?? row.prompt;
    const prompt = sameSession ? `A usage limit interrupted your last turn; it continues now on another account. If this request is not done yet, carry it out now:\n\n${original}` : original;
    await this.resumeWith(updated, prompt, "account_switch", { resume: sameSession || row.runResumed, reason: decision.reason });
  }

  /** The follow-ups that wait, in order, as the next run of the same session (marked delivered with its start). */
  private async deliverFollowUps(id: string, base: AgentPatch, result: string | null): Promise<void> {
    const waiting = await this.ctx.messages.undelivered(id);
    const updated = await this.ctx.records.update(id, { ...base, result, missingSignalRetries: 0 });
    const text = waiting.map((m) => m.text).join("\n\n");
    await this.output.note(id, updated.sessionNumber, "user_message", text);
    await this.resumeWith(updated, text, "message", { deliver: waiting });
  }

  async resumeWith(row: AgentRow, prompt: string, kind: Exclude<RunKind, "spawn">, opts: { resume?: boolean; reason?: string; deliver?: AgentMessageRow[] } = {}): Promise<void> {
    if (this.ctx.closed()) return;
    const launched = await this.launch(row, { prompt, resume: opts.resume ?? true, kind, ...(opts.reason ? { reason: opts.reason } : {}), ...(opts.deliver ? { deliver: opts.deliver } : {}) });
    if (launched) await this.ctx.publish(row.id, "agent.resumed", { session: launched.session, reason: kind, pid: launched.ref.pid });
  }

  /** Stop watching an agent's run without touching its host (its worker is lost). */
  async forget(id: string): Promise<void> {
    const session = this.live.get(id);
    if (!session) return;
    this.live.delete(id);
    await session.detach();
  }

  /** A user's stop of a live process run: resolves once its end was handled. False when none runs here. */
  async stopLive(id: string): Promise<boolean> {
    const session = this.live.get(id);
    if (!session) return false;
    await session.stop();
    await this.finishing.get(id);
    return true;
  }

  /** Resolves once the agent's last process run has been handled (result recorded, cleanup decided). */
  async settled(id: string): Promise<void> {
    await this.finishing.get(id);
  }

  /**
   * After a restart: follow-ups stored the old way become rows; live agents are watched again
   * (their processes kept running), the ones that never got a process are crashed; agents that
   * waited for an account get one if it freed up meanwhile.
   */
  async reattachAll(opts: { takeover?: boolean } = {}): Promise<{ reattached: string[]; finished: string[] }> {
    const reattached: string[] = [];
    const finished: string[] = [];
    for (const row of await this.ctx.records.all()) {
      if (opts.takeover && (!LIVE_STATUSES.includes(row.status) || this.live.has(row.id) || this.finishing.has(row.id))) continue;
      // another server of the database watches it (its lease is live)
      if (LIVE_STATUSES.includes(row.status) && !this.live.has(row.id) && !(await this.ctx.claim(row.id, { takeover: opts.takeover }))) continue;
      // its approval requests died with the server that held them open
      if (LIVE_STATUSES.includes(row.status)) await this.ctx.approvals.expirePendingOf(row.id, "the server restarted while the agent waited");
      if (row.queuedMessages.length > 0) {
        await this.ctx.messages.importLegacy(row.id, row.queuedMessages);
        await this.ctx.records.update(row.id, { queuedMessages: [] });
      }
      if (!LIVE_STATUSES.includes(row.status)) continue;
      if (!row.pid || !row.outputPath) {
        const reason = "the server stopped while the agent was starting";
        await this.ctx.lifecycle.transition(row.id, "crashed", { expectedVersion: row.version, patch: { statusReason: reason, finishedAt: Date.now() }, event: { type: "agent.crashed", payload: { reason } } });
        finished.push(row.id);
        continue;
      }
      this.attach(row, this.refOf(row), false);
      reattached.push(row.id);
      await this.ctx.publish(row.id, "agent.status_changed", { status: row.status, reason: "re-attached after a server restart" });
    }
    if (opts.takeover) return { reattached, finished };
    for (const provider of new Set((await this.ctx.records.all()).filter((r) => r.status === "waiting_for_account").map((r) => r.provider))) this.wakeWaiting(provider);
    return { reattached, finished };
  }

  /** Server shutdown: stop watching (the processes keep running and are re-attached at start). */
  async detachAll(): Promise<void> {
    this.detaching = true;
    await Promise.all([...this.live.values()].map((s) => s.detach()));
    this.live.clear();
    await Promise.all([...this.finishing.values(), ...this.recording.values()]);
  }
}

/**
 * An error handler that lets the same message through once per `ms`: a worker out of reach fails
 * every poll of every agent on it the same way (five times a second each), which says nothing new.
 */
function quietRepeats(ms: number, report: (err: Error) => void): (err: Error) => void {
  let last = "";
  let quietUntil = 0;
  return (err) => {
    const now = Date.now();
    if (err.message === last && now < quietUntil) return;
    last = err.message;
    quietUntil = now + ms;
    report(err);
  };
}
