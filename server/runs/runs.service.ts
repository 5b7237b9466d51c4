import { randomUUID } from "node:crypto";
import { resolve } from "node:path";
import type { ListPage } from "../../shared/api";
import type { BusEvent } from "../../shared/events";
import type { PendingRequest, PermissionDecision, RunSummary } from "../../shared/runs";
import type { Cluster } from "../cluster/cluster.service";
import type { CommandOp } from "../cluster/commands";
import { first, type Store } from "../db/store";
import { DomainError } from "../errors";
import type { CommonErrorCode, RunErrorCode } from "../../shared/errors";
import type { EventBus } from "../events/bus";
import type { Logger } from "../log";
import { resolveStrategyPath } from "../strategies/discovery";
import { loadStrategyFile } from "../strategies/loader";
import { GlobError } from "../tools/globs";
import { callAgent, type AgentCallDeps } from "./agent-call";
import { FlowExecutor } from "./flow-executor";
import { RunLifecycle, type RunEnd } from "./run-lifecycle";
import { RunListing, type RunFilter } from "./run-listing";
import { recoverRuns } from "./run-recovery";
import { inMemorySummary, runDetail, runSummary } from "./run-views";
import { RunCancelledError, RunState, type RunConfig, type PolicyPort } from "./run-state";
import { agentRecords, humanInputs, lastSegment, readRunEvents } from "./timeline";
import { eq } from "drizzle-orm";

export type RunsDeps = AgentCallDeps & {
  store: Store;
  bus: EventBus;
  log: Logger;
  home: string;
  createPolicy: (cwd: string) => PolicyPort;
  /** Frames for runs that are not persisted (a stopped prepared run). */
  onEphemeral?: (runId: string, frame: { type: string; [k: string]: unknown }) => void;
  /** The servers of the database: run ownership (leases), commands to the owner (absent in unit tests: this server owns everything). */
  cluster?: Cluster;
};

export type PrepareInput = { runId?: string; strategyPath?: string; modelOverride?: string; cwd?: string; manifestPath?: string; budget?: { tokens?: number; usd?: number } };

const fail = (code: RunErrorCode | CommonErrorCode, message: string, kind: "NOT_FOUND" | "BAD_REQUEST" | "CONFLICT" = "BAD_REQUEST") => new DomainError(code, message, { kind });

/** Keep this many finished runs in memory (for list_strategies and quick access). */
const KEEP_FINISHED = 100;

/**
 * Strategy runs: prepare, start, continue, stop, steer, answer. One engine behind the Comma
 * protocol and tRPC; every change is an event under scope runId (the durable timeline), and the
 * `runs` table is the listing projection of each run's latest segment, written by RunLifecycle
 * alone (with the event of each move, in one transaction).
 */
export class RunsService {
  private readonly active = new Map<string, RunState>();
  private readonly lifecycle: RunLifecycle;
  private readonly listing: RunListing;
  /** Runs another server took over (their lease was lost): stopped here, nothing more written. */
  private readonly lost = new Set<string>();
  /** Runs between start/continue and their run.started (a second start meanwhile is refused). */
  private readonly launching = new Set<string>();
  private recovering: Promise<{ resumed: string[]; interrupted: string[] }> | undefined;
  /** Set on shutdown: interrupted segments are left for recover() at the next start. */
  private closing = false;

  constructor(private readonly deps: RunsDeps) {
    const cluster = deps.cluster;
    this.listing = new RunListing(deps.store);
    this.lifecycle = new RunLifecycle(deps.store, deps.bus, cluster ? (tx, runId) => cluster.leases.fence(tx, "run", runId) : undefined);
    if (cluster) this.serveCommands(cluster);
  }

  /** What other servers ask of the runs this server owns. */
  private serveCommands(cluster: Cluster): void {
    type P = { runId: string; input?: string; requestId?: string; text?: string; decision?: PermissionDecision; change?: Parameters<PolicyPort["update"]>[0] };
    const on = (op: CommandOp, fn: (p: P) => Promise<unknown>) => cluster.commands.handle(op, (payload) => fn(payload as P));
    on("run.start", async (p) => void (await this.start(p.runId, p.input, p.requestId)));
    on("run.continue", async (p) => void (await this.continue(p.runId, p.input ?? "", p.requestId)));
    on("run.stop", (p) => this.stop(p.runId));
    on("run.steer", (p) => this.steer(p.runId, p.text ?? ""));
    on("run.respond", (p) => this.respond(p.runId, p.requestId ?? "", { text: p.text, decision: p.decision }));
    on("run.policy", (p) => this.updatePolicy(p.runId, p.change!, p.requestId));
    cluster.onLost("run", (runId) => {
      const run = this.active.get(runId);
      if (!run) return;
      // another server took it over: stop here without writing (the fence refuses our writes anyway)
      this.lost.add(runId);
      run.stopForShutdown();
    });
    cluster.onScan(async () => {
      const recovered = await this.recover();
      if (recovered.resumed.length + recovered.interrupted.length > 0) this.deps.log.info(recovered, "runs taken over from a lost server");
    });
  }

  /** The server owning a run this server does not run, when there is one (its commands go there). */
  private async remoteOwner(runId: string): Promise<string | undefined> {
    const run = this.active.get(runId);
    if (run?.status === "running" && !this.lost.has(runId)) return undefined;
    const owner = await this.deps.cluster?.leases.remoteOwner("run", runId);
    // prepared here, then started on another server: that server has it now
    if (owner && run?.status === "pending") this.active.delete(runId);
    return owner;
  }

  /** Stop of a run prepared on another server and not started: let it go (its stored input). */
  private async dropPreparedElsewhere(runId: string): Promise<boolean> {
    if (!this.deps.cluster) return false;
    const { preparedRuns } = this.deps.store.t;
    const dropped = await this.deps.store.tx((tx) => tx.delete(preparedRuns).where(eq(preparedRuns.runId, runId)).returning({ runId: preparedRuns.runId }));
    if (dropped.length === 0) return false;
    this.deps.onEphemeral?.(runId, { type: "strategy_error", runId, error: { code: "CANCELLED", message: "Run cancelled by client" } });
    return true;
  }

  private forward<T>(serverId: string, op: CommandOp, payload: Record<string, unknown>): Promise<T> {
    return this.deps.cluster!.commands.send<T>(serverId, op, payload);
  }

  activeCount(): number {
    let n = 0;
    for (const r of this.active.values()) if (r.status === "running") n++;
    return n;
  }

  /** In-memory run (pending, running, or recently finished). */
  inMemory(runId: string): RunState | undefined {
    return this.active.get(runId);
  }

  async prepare(input: PrepareInput): Promise<{ run: RunState; attached: boolean }> {
    const existing = input.runId ? this.active.get(input.runId) : undefined;
    if (existing && (existing.status === "pending" || existing.status === "running")) return { run: existing, attached: true };
    const row = input.runId ? await this.row(input.runId) : undefined;
    if (!row && !input.strategyPath) throw fail("PREPARE_FAILED", input.runId ? `Run not found: ${input.runId}` : "prepare_run needs a strategyPath (or the runId of an existing run)", "NOT_FOUND");
    const cwd = resolve(input.cwd ?? row?.cwd ?? process.cwd());
    const manifestPath = input.manifestPath ?? row?.manifestPath ?? undefined;
    const strategyRef = input.strategyPath ?? row!.strategyPath;
    let loaded;
    try {
      const path = await resolveStrategyPath(strategyRef, cwd, { home: this.deps.home, manifestPath });
      loaded = await loadStrategyFile(path, { cwd });
    } catch (err) {
      throw fail("PREPARE_FAILED", (err as Error).message);
    }
    const modelOverride = input.modelOverride ?? row?.modelOverride ?? undefined;
    if (modelOverride) {
      try {
        this.deps.resolveModel(modelOverride);
      } catch (err) {
        throw fail("PREPARE_FAILED", (err as Error).message);
      }
    }
    const warnings = loaded.warnings.map((w) => ({ path: w.path, message: w.message }));
    const run = this.createRun({ runId: input.runId ?? randomUUID(), strategy: loaded.strategy, strategyPath: loaded.path, cwd, manifestPath, modelOverride, warnings, ...(input.budget ? { budget: input.budget } : {}) });
    if (row) run.preparedFrom(row.segment, agentRecords(await readRunEvents(this.deps.bus.store, run.runId)));
    this.remember(run);
    await this.keepPrepared(run.runId, { ...input, runId: run.runId, strategyPath: loaded.path, cwd, ...(manifestPath ? { manifestPath } : {}), ...(modelOverride ? { modelOverride } : {}) });
    return { run, attached: false };
  }

  /** A prepared run is stored, so start_run / continue_run may reach any server of the database. */
  private async keepPrepared(runId: string, input: PrepareInput): Promise<void> {
    if (!this.deps.cluster) return;
    const { preparedRuns } = this.deps.store.t;
    const values = { input: JSON.stringify(input), serverId: this.deps.cluster.serverId, createdAt: Date.now() };
    await this.deps.store.tx((tx) => tx.insert(preparedRuns).values({ runId, ...values }).onConflictDoUpdate({ target: preparedRuns.runId, set: values }));
  }

  private async dropPrepared(runId: string): Promise<void> {
    if (!this.deps.cluster) return;
    const { preparedRuns } = this.deps.store.t;
    await this.deps.store.tx((tx) => tx.delete(preparedRuns).where(eq(preparedRuns.runId, runId)));
  }

  /**
   * The prepared run to start here: in memory, or prepared on another server (its stored input
   * prepares it again here). A run another server already started is refused there (CONFLICT).
   */
  private async preparedHere(runId: string): Promise<RunState | undefined> {
    const local = this.active.get(runId);
    if (local && local.status === "pending") return local;
    if (!this.deps.cluster) return local;
    const { preparedRuns } = this.deps.store.t;
    const stored = await first(this.deps.store.read.select().from(preparedRuns).where(eq(preparedRuns.runId, runId)));
    if (!stored) return local;
    const { run } = await this.prepare(JSON.parse(stored.input) as PrepareInput);
    return run;
  }

  /** The conversation a prepared run carries (records, inputs), as run_prepared sends it. */
  async conversation(run: RunState) {
    const events = run.continuation || run.segment > 0 ? await readRunEvents(this.deps.bus.store, run.runId) : [];
    return { records: agentRecords(events), retentionEvents: [] as unknown[], inputs: humanInputs(events) };
  }

  async start(runId: string, input: string | undefined, requestId?: string): Promise<RunState> {
    const run = await this.preparedHere(runId);
    if (!run) throw fail("START_FAILED", `Prepared run not found: ${runId}`, "NOT_FOUND");
    if (run.status !== "pending" || this.launching.has(runId)) throw fail("START_FAILED", `Run ${runId} already started`, "CONFLICT");
    if (run.continuation) throw fail("START_FAILED", `Run ${runId} was prepared from its timeline: send continue_run`, "CONFLICT");
    await this.launch(run, input ?? "", requestId, false);
    return run;
  }

  async continue(runId: string, input: string, requestId?: string): Promise<RunState> {
    const run = await this.preparedHere(runId);
    if (!run) throw fail("CONTINUE_FAILED", `Prepared run not found: ${runId}`, "NOT_FOUND");
    if (run.status !== "pending" || this.launching.has(runId)) throw fail("CONTINUE_FAILED", `Run ${runId} is ${this.launching.has(runId) ? "starting" : run.status}: prepare it again to continue`, "CONFLICT");
    if (!run.continuation) throw fail("CONTINUE_FAILED", `Run ${runId} has no timeline yet: send start_run`, "CONFLICT");
    await this.launch(run, input, requestId, true);
    return run;
  }

  private async launch(run: RunState, input: string, requestId: string | undefined, continuation: boolean): Promise<void> {
    this.launching.add(run.runId);
    try {
      await this.launchOnce(run, input, requestId, continuation);
    } finally {
      this.launching.delete(run.runId);
    }
  }

  private async launchOnce(run: RunState, input: string, requestId: string | undefined, continuation: boolean): Promise<void> {
    const cluster = this.deps.cluster;
    if (cluster) {
      this.lost.delete(run.runId);
      if ((await cluster.leases.acquire("run", run.runId)) === undefined) {
        throw fail(continuation ? "CONTINUE_FAILED" : "START_FAILED", `Run ${run.runId} runs on another server already`, "CONFLICT");
      }
    }
    try {
      await this.lifecycle.transition(run, { event: continuation ? "continue" : "start", input, requestId });
    } catch (err) {
      await cluster?.leases.release("run", run.runId);
      throw err;
    }
    await this.dropPrepared(run.runId);
    for (const w of run.warnings) await run.emit("run.warned", w);
    this.execute(run, input);
  }

  /** Run the flow in the background; the segment ends with exactly one run.completed. */
  private execute(run: RunState, input: string): void {
    const executor = new FlowExecutor(run, (agentName, text, stepKey) => callAgent(run, this.deps, agentName, text, stepKey));
    const segment = run.segment;
    run.executing(
      executor.execute(run.config.strategy.flow, input).then(
        (out) => this.finish(run, segment, { event: "complete", result: out.text, flowUsage: out.usage }),
        (err: unknown) => {
          if (err instanceof RunCancelledError || run.signal.aborted) return this.finish(run, segment, { event: "cancel", error: { code: "CANCELLED", message: "Run cancelled by client" } });
          const message = String((err as Error)?.message ?? err);
          this.deps.log.warn({ runId: run.runId, err: message }, "run failed");
          const code = err instanceof DomainError && err.code === "BUDGET_EXCEEDED" ? err.code : "EXECUTION_ERROR";
          return this.finish(run, segment, { event: "fail", error: { code, message } });
        },
      ),
    );
  }

  /** The segment's one run.completed (and its row): not when a newer segment began, nor on shutdown. */
  private async finish(run: RunState, segment: number, end: RunEnd): Promise<void> {
    if (run.segment !== segment || run.status !== "running" || this.closing || this.lost.has(run.runId)) return;
    await this.lifecycle.transition(run, end).catch(() => {});
    await this.deps.cluster?.leases.release("run", run.runId).catch(() => {});
  }

  /** Stop a run: a prepared one is released, a running one aborted (CANCELLED exactly once). */
  async stop(runId: string): Promise<void> {
    const owner = await this.remoteOwner(runId);
    if (owner) return this.forward(owner, "run.stop", { runId });
    const run = this.active.get(runId);
    if (!run) {
      if (await this.dropPreparedElsewhere(runId)) return;
      if (await this.row(runId)) return;
      throw fail("RUN_NOT_FOUND", `Run not found: ${runId}`, "NOT_FOUND");
    }
    if (run.status === "pending") {
      this.active.delete(runId);
      await this.dropPrepared(runId);
      await this.lifecycle.transition(run, { event: "cancel", error: { code: "CANCELLED", message: "Run cancelled by client" } });
      this.deps.onEphemeral?.(runId, { type: "strategy_error", runId, error: { code: "CANCELLED", message: "Run cancelled by client" } });
      return;
    }
    if (run.status !== "running") return;
    run.cancel("Run cancelled");
    await run.finished;
  }

  async steer(runId: string, text: string): Promise<void> {
    const owner = await this.remoteOwner(runId);
    if (owner) return this.forward(owner, "run.steer", { runId, text });
    const run = this.active.get(runId);
    if (!run || run.status !== "running") throw fail("RUN_NOT_STEERABLE", `Run ${runId} is not running${run ? ` (${run.status})` : ""}: only a running run can be steered`, "CONFLICT");
    run.queueSteering(text);
    await run.emit("run.steer_queued", { text });
  }

  /** Answer an open request of a run: input text, question response, or permission decision. */
  async respond(runId: string, requestId: string, answer: { text?: string; decision?: PermissionDecision }): Promise<PendingRequest> {
    const owner = await this.remoteOwner(runId);
    if (owner) return this.forward(owner, "run.respond", { runId, requestId, ...answer });
    const run = this.active.get(runId);
    const request = run?.pendingRequests().find((r) => r.requestId === requestId);
    if (!run || !request) throw fail("NO_PENDING_REQUEST", `Run ${runId} has no open request ${requestId}`, "NOT_FOUND");
    if (request.kind === "permission") {
      if (!answer.decision) throw fail("BAD_INPUT", "A permission request needs a decision: allow, deny, allow-session or deny-session");
      run.answer(requestId, { text: answer.decision, decision: answer.decision, source: "human" });
    } else {
      if (answer.text === undefined) throw fail("BAD_INPUT", `A ${request.kind} request needs a text answer`);
      run.answer(requestId, { text: answer.text, source: "human" });
    }
    return request;
  }

  /** An open request of a run, here or (from its timeline) on the server that owns it. */
  async pendingOf(runId: string, kind: PendingRequest["kind"], match: (r: PendingRequest) => boolean = () => true): Promise<PendingRequest | undefined> {
    const local = this.active.get(runId);
    if (local && local.status === "running" && !this.lost.has(runId)) return local.findRequest((r) => r.kind === kind && match(r));
    return (await this.storedOpenRequests(runId)).find((r) => r.kind === kind && match(r));
  }

  /** The open requests of a run's latest segment, from its timeline (a run another server owns). */
  private async storedOpenRequests(runId: string): Promise<PendingRequest[]> {
    if (!this.deps.cluster) return [];
    const seg = lastSegment(await readRunEvents(this.deps.bus.store, runId));
    if (!seg.started || seg.completed) return [];
    return [...seg.memo.openRequests.values()] as PendingRequest[];
  }

  async updatePolicy(runId: string, change: Parameters<PolicyPort["update"]>[0], requestId?: string): Promise<Record<string, unknown>> {
    const owner = await this.remoteOwner(runId);
    if (owner) return this.forward(owner, "run.policy", { runId, change, ...(requestId ? { requestId } : {}) });
    const run = this.active.get(runId);
    if (!run) throw fail("RUN_NOT_FOUND", `Run not found: ${runId}`, "NOT_FOUND");
    try {
      run.policy.update(change);
    } catch (err) {
      throw err instanceof GlobError ? fail("BAD_INPUT", err.message) : err;
    }
    const policies = run.policy.toJSON();
    if (run.status !== "pending") await run.emit("run.policy_updated", { tool: change.tool ?? "*", policies, ...(requestId ? { requestId } : {}) });
    return policies;
  }

  /** A page of the runs, newest first (keyset: `cursor` is the `nextCursor` of the page before; no `limit`: all of them). */
  async list(filter: RunFilter = {}, page: { limit?: number; cursor?: string | null } = {}): Promise<ListPage<RunSummary>> {
    const { rows, nextCursor } = await this.listing.page(this.resolved(filter), page.limit, page.cursor);
    return { items: rows.map((row) => runSummary(row, this.active.get(row.id))), nextCursor };
  }

  /** How many runs the filter keeps, in all and per status (what the list's status filters show). */
  counts(filter: Omit<RunFilter, "status"> = {}) {
    return this.listing.counts(this.resolved(filter));
  }

  private resolved<F extends { cwd?: string }>(filter: F): F {
    return filter.cwd ? { ...filter, cwd: resolve(filter.cwd) } : filter;
  }

  /** Runs held in memory, as list_strategies reports them. */
  listInMemory() {
    return [...this.active.values()].map(inMemorySummary);
  }

  /** One run: its listing row, live state and what it waits on. */
  async get(runId: string) {
    const row = await this.row(runId);
    let run = this.active.get(runId);
    // prepared here but started on another server (its row runs there), or taken over by one
    if (run && row && ((run.status === "pending" && row.status === "running") || this.lost.has(runId))) run = undefined;
    if (!row && !run) throw fail("RUN_NOT_FOUND", `Run not found: ${runId}`, "NOT_FOUND");
    const remote = !run && row?.status === "running" ? await this.storedOpenRequests(runId) : [];
    return runDetail(runId, row, run, this.deps.bus.store, remote);
  }

  /** Every open input, question and permission request of the live runs (for the inbox), this server's and the others'. */
  async openRequests(): Promise<Array<{ runId: string; strategyName: string; request: PendingRequest }>> {
    const out: Array<{ runId: string; strategyName: string; request: PendingRequest }> = [];
    for (const run of this.active.values()) {
      if (run.status !== "running" || this.lost.has(run.runId)) continue;
      for (const request of run.pendingRequests()) out.push({ runId: run.runId, strategyName: run.config.strategy.name, request });
    }
    if (!this.deps.cluster?.shared) return out;
    for (const row of await this.lifecycle.running()) {
      const here = this.active.get(row.id);
      if (here?.status === "running" && !this.lost.has(row.id)) continue;
      for (const request of await this.storedOpenRequests(row.id)) out.push({ runId: row.id, strategyName: row.strategyName, request });
    }
    return out;
  }

  row(runId: string) {
    return this.lifecycle.row(runId);
  }

  /** A run this server or another knows: held here, stored, or prepared on any server of the database. */
  async exists(runId: string): Promise<boolean> {
    if (this.active.has(runId) || (await this.row(runId))) return true;
    if (!this.deps.cluster) return false;
    const { preparedRuns } = this.deps.store.t;
    return (await first(this.deps.store.read.select({ runId: preparedRuns.runId }).from(preparedRuns).where(eq(preparedRuns.runId, runId)))) !== undefined;
  }

  async timeline(runId: string, afterId = 0, limit = 1000): Promise<BusEvent[]> {
    return this.deps.bus.store.readAfter(afterId, { kind: "run", id: runId }, limit);
  }

  private remember(run: RunState): void {
    this.active.set(run.runId, run);
    if (this.active.size <= KEEP_FINISHED) return;
    for (const [id, r] of this.active) {
      if (this.active.size <= KEEP_FINISHED) break;
      if (r.status !== "pending" && r.status !== "running") this.active.delete(id);
    }
  }

  /**
   * On server start, and on a shared database at every heartbeat: the runs left running that this
   * server can own (no lease, an expired one, or its own from before a restart) are taken over:
   * waiting segments resume, the others end INTERRUPTED (run-recovery.ts).
   */
  recover(): Promise<{ resumed: string[]; interrupted: string[] }> {
    this.recovering ??= this.recoverOnce().finally(() => (this.recovering = undefined));
    return this.recovering;
  }

  private recoverOnce(): Promise<{ resumed: string[]; interrupted: string[] }> {
    const cluster = this.deps.cluster;
    return recoverRuns({
      claim: async (row) => {
        const here = this.active.get(row.id);
        if (here?.status === "running" && !this.lost.has(row.id)) return false;
        if (this.closing || !cluster) return !this.closing;
        if ((await cluster.leases.acquire("run", row.id, { skipHeld: true })) === undefined) return false;
        this.lost.delete(row.id);
        return true;
      },
      lifecycle: this.lifecycle,
      store: this.deps.bus.store,
      log: this.deps.log,
      createRun: (config) => this.createRun(config),
      adopt: (run, input) => {
        this.remember(run);
        this.execute(run, input);
      },
    });
  }

  private createRun(config: RunConfig): RunState {
    const leases = this.deps.cluster?.leases;
    return new RunState(config, this.deps.bus, this.deps.createPolicy(config.cwd), leases && (() => leases.fenceOf("run", config.runId)));
  }

  /** Stop everything (server shutdown): runs end as they are; recover() picks them up. */
  async shutdown(): Promise<void> {
    this.closing = true;
    const running = [...this.active.values()].filter((r) => r.status === "running");
    for (const run of running) run.stopForShutdown();
    await Promise.all(running.map((r) => r.finished?.catch(() => {})));
  }
}
