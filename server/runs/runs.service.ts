import { randomUUID } from "node:crypto";
import { isAbsolute, resolve } from "node:path";
import { desc, eq } from "drizzle-orm";
import type { BusEvent } from "../../shared/events";
import type { PendingRequest, PermissionDecision, RunSummary } from "../../shared/runs";
import type { Strategy } from "../../shared/strategy";
import type { Db } from "../db/client";
import { DomainError } from "../errors";
import type { EventBus } from "../events/bus";
import type { Logger } from "../log";
import { resolveStrategyPath } from "../strategies/discovery";
import { flowGraph } from "../strategies/flow-graph";
import { loadStrategyFile } from "../strategies/loader";
import { callAgent, type AgentCallDeps } from "./agent-call";
import { FlowExecutor } from "./flow-executor";
import { RunCancelledError, RunState, type PolicyPort } from "./run-state";
import { runs } from "./runs.sql";
import { agentRecords, humanInputs, lastSegment, readRunEvents } from "./timeline";

export type RunsDeps = AgentCallDeps & {
  db: Db;
  bus: EventBus;
  log: Logger;
  home: string;
  createPolicy: (cwd: string) => PolicyPort;
  /** Frames for runs that are not persisted (a stopped prepared run). */
  onEphemeral?: (runId: string, frame: { type: string; [k: string]: unknown }) => void;
};

export type PrepareInput = { runId?: string; strategyPath?: string; modelOverride?: string; cwd?: string; manifestPath?: string; budget?: { tokens?: number; usd?: number } };

const fail = (code: string, message: string, kind: "NOT_FOUND" | "BAD_REQUEST" | "CONFLICT" = "BAD_REQUEST") => new DomainError(code, message, { kind });

/** Keep this many finished runs in memory (for list_strategies and quick access). */
const KEEP_FINISHED = 100;

/**
 * Strategy runs: prepare, start, continue, stop, steer, answer. One engine behind the Comma
 * protocol and tRPC; every change is an event under scope runId (the durable timeline), and the
 * `runs` table is the listing projection of each run's latest segment.
 */
export class RunsService {
  private readonly active = new Map<string, RunState>();
  /** Set on shutdown: interrupted segments are left for recover() at the next start. */
  private closing = false;

  constructor(private readonly deps: RunsDeps) {}

  /** Where frames of runs that are not persisted go (the protocol layer sets it). */
  setEphemeralSink(sink: NonNullable<RunsDeps["onEphemeral"]>): void {
    this.deps.onEphemeral = sink;
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
    const row = input.runId ? this.row(input.runId) : undefined;
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
    const run = new RunState(
      { runId: input.runId ?? randomUUID(), strategy: loaded.strategy, strategyPath: loaded.path, cwd, manifestPath, modelOverride, ...(input.budget ? { budget: input.budget } : {}) },
      this.deps.bus,
      this.deps.createPolicy(cwd),
    );
    run.warnings = loaded.warnings.map((w) => ({ path: w.path, message: w.message }));
    if (row) {
      run.continuation = true;
      run.segment = row.segment;
      for (const record of agentRecords(readRunEvents(this.deps.bus.store, run.runId))) {
        const list = run.history.get(record.agentName) ?? [];
        list.push(record);
        run.history.set(record.agentName, list);
      }
    }
    this.remember(run);
    return { run, attached: false };
  }

  /** The conversation a prepared run carries (records, inputs), as run_prepared sends it. */
  conversation(run: RunState) {
    const events = run.continuation || run.segment > 0 ? readRunEvents(this.deps.bus.store, run.runId) : [];
    return { records: agentRecords(events), retentionEvents: [] as unknown[], inputs: humanInputs(events) };
  }

  async start(runId: string, input: string | undefined, requestId?: string): Promise<RunState> {
    const run = this.active.get(runId);
    if (!run) throw fail("START_FAILED", `Prepared run not found: ${runId}`, "NOT_FOUND");
    if (run.status !== "pending") throw fail("START_FAILED", `Run ${runId} already started`, "CONFLICT");
    if (run.continuation) throw fail("START_FAILED", `Run ${runId} was prepared from its timeline: send continue_run`, "CONFLICT");
    await this.launch(run, input ?? "", requestId, false);
    return run;
  }

  async continue(runId: string, input: string, requestId?: string): Promise<RunState> {
    const run = this.active.get(runId);
    if (!run) throw fail("CONTINUE_FAILED", `Prepared run not found: ${runId}`, "NOT_FOUND");
    if (run.status !== "pending") throw fail("CONTINUE_FAILED", `Run ${runId} is ${run.status}: prepare it again to continue`, "CONFLICT");
    if (!run.continuation) throw fail("CONTINUE_FAILED", `Run ${runId} has no timeline yet: send start_run`, "CONFLICT");
    await this.launch(run, input, requestId, true);
    return run;
  }

  private async launch(run: RunState, input: string, requestId: string | undefined, continuation: boolean): Promise<void> {
    run.beginSegment(requestId);
    run.startedAt = Date.now();
    run.completedAt = undefined;
    const c = run.config;
    const values = {
      cwd: c.cwd,
      strategyName: c.strategy.name,
      strategyPath: c.strategyPath,
      status: "running" as const,
      segment: run.segment,
      startedAt: run.startedAt,
      completedAt: null,
      modelOverride: c.modelOverride ?? null,
      manifestPath: c.manifestPath ?? null,
      input,
      result: null,
      errorCode: null,
      errorMessage: null,
      promptTokens: 0,
      completionTokens: 0,
    };
    this.deps.db.insert(runs).values({ id: run.runId, ...values }).onConflictDoUpdate({ target: runs.id, set: values }).run();
    await run.emit("run.started", {
      segment: run.segment,
      strategyPath: c.strategyPath,
      strategyName: c.strategy.name,
      cwd: c.cwd,
      agents: Object.keys(c.strategy.agents),
      flowTree: c.strategy.flow as unknown as Record<string, unknown>,
      initialInput: input,
      manifestPath: c.manifestPath,
      modelOverride: c.modelOverride,
      continuation,
      requestId,
    });
    for (const w of run.warnings) await run.emit("run.warning", w);
    this.execute(run, input);
  }

  /** Run the flow in the background; the segment ends with exactly one run.completed. */
  private execute(run: RunState, input: string): void {
    const executor = new FlowExecutor(run, (agentName, text, stepKey) => callAgent(run, this.deps, agentName, text, stepKey));
    const segment = run.segment;
    run.finished = executor.execute(run.config.strategy.flow, input).then(
      (out) => this.finish(run, segment, { status: "completed", result: out.text }),
      (err: unknown) => {
        if (err instanceof RunCancelledError || run.signal.aborted) return this.finish(run, segment, { status: "cancelled", error: { code: "CANCELLED", message: "Run cancelled" } });
        const message = this.deps.log ? String((err as Error)?.message ?? err) : String(err);
        this.deps.log.warn({ runId: run.runId, err: message }, "run failed");
        const code = err instanceof DomainError && err.code === "BUDGET_EXCEEDED" ? err.code : "EXECUTION_ERROR";
        return this.finish(run, segment, { status: "error", error: { code, message } });
      },
    );
  }

  private async finish(run: RunState, segment: number, end: { status: "completed" | "error" | "cancelled"; result?: string; error?: { code: string; message: string } }) {
    if (run.segment !== segment || run.status !== "running" || this.closing) return;
    run.status = end.status;
    run.completedAt = Date.now();
    run.cancel("Run finished");
    this.deps.db
      .update(runs)
      .set({
        status: end.status,
        completedAt: run.completedAt,
        result: end.result ?? null,
        errorCode: end.error?.code ?? null,
        errorMessage: end.error?.message ?? null,
        promptTokens: run.usage.promptTokens,
        completionTokens: run.usage.completionTokens,
        costUsd: Math.round(run.spent.usd * 1e6) / 1e6,
      })
      .where(eq(runs.id, run.runId))
      .run();
    await run.emit("run.completed", { segment, status: end.status, result: end.result, usage: { ...run.usage }, error: end.error, requestId: run.requestId }).catch(() => {});
  }

  /** Stop a run: a prepared one is released, a running one aborted (CANCELLED exactly once). */
  async stop(runId: string): Promise<void> {
    const run = this.active.get(runId);
    if (!run) {
      if (this.row(runId)) return;
      throw fail("RUN_NOT_FOUND", `Run not found: ${runId}`, "NOT_FOUND");
    }
    if (run.status === "pending") {
      this.active.delete(runId);
      run.status = "cancelled";
      this.deps.onEphemeral?.(runId, { type: "strategy_error", runId, error: { code: "CANCELLED", message: "Run cancelled" } });
      return;
    }
    if (run.status !== "running") return;
    run.cancel("Run cancelled");
    await run.finished;
  }

  async steer(runId: string, text: string): Promise<void> {
    const run = this.active.get(runId);
    if (!run || run.status !== "running") throw fail("RUN_NOT_STEERABLE", `Run ${runId} is not running${run ? ` (${run.status})` : ""}: only a running run can be steered`, "CONFLICT");
    run.steerQueue.push(text);
    await run.emit("run.steer_queued", { text });
  }

  /** Answer an open request of a run: input text, question response, or permission decision. */
  respond(runId: string, requestId: string, answer: { text?: string; decision?: PermissionDecision }): PendingRequest {
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

  pendingOf(runId: string, kind: PendingRequest["kind"], match: (r: PendingRequest) => boolean = () => true): PendingRequest | undefined {
    return this.active.get(runId)?.findRequest((r) => r.kind === kind && match(r));
  }

  async updatePolicy(runId: string, change: Parameters<PolicyPort["update"]>[0], requestId?: string): Promise<Record<string, unknown>> {
    const run = this.active.get(runId);
    if (!run) throw fail("RUN_NOT_FOUND", `Run not found: ${runId}`, "NOT_FOUND");
    run.policy.update(change);
    const policies = run.policy.toJSON();
    if (run.status !== "pending") await run.emit("run.policy_updated", { tool: change.tool ?? "*", policies, ...(requestId ? { requestId } : {}) });
    return policies;
  }

  list(filter: { cwd?: string } = {}): RunSummary[] {
    const q = this.deps.db.select().from(runs);
    const rows = (filter.cwd ? q.where(eq(runs.cwd, resolve(filter.cwd))) : q).orderBy(desc(runs.startedAt)).all();
    return rows.map((r) => ({
      runId: r.id,
      cwd: r.cwd,
      strategyName: r.strategyName,
      strategyPath: r.strategyPath,
      startedAt: new Date(r.startedAt).toISOString(),
      completedAt: r.completedAt ? new Date(r.completedAt).toISOString() : null,
      status: r.status,
      usage: r.status === "running" && this.active.get(r.id) ? { ...this.active.get(r.id)!.usage } : { promptTokens: r.promptTokens, completionTokens: r.completionTokens },
      costUsd: r.status === "running" && this.active.get(r.id) ? this.active.get(r.id)!.spent.usd : (r.costUsd ?? undefined),
    }));
  }

  /** Runs held in memory, as list_strategies reports them. */
  listInMemory() {
    return [...this.active.values()].map((r) => ({
      runId: r.runId,
      strategyName: r.config.strategy.name,
      status: r.status,
      startedAt: new Date(r.startedAt).toISOString(),
      ...(r.completedAt ? { completedAt: new Date(r.completedAt).toISOString() } : {}),
    }));
  }

  /** One run: its listing row, live state and what it waits on. */
  get(runId: string) {
    const row = this.row(runId);
    const run = this.active.get(runId);
    if (!row && !run) throw fail("RUN_NOT_FOUND", `Run not found: ${runId}`, "NOT_FOUND");
    const strategy = run?.config.strategy;
    const first = strategy ? undefined : this.deps.bus.store.readAfter(0, { kind: "run", id: runId }, 1)[0];
    const startedPayload = first?.type === "run.started" ? first.payload : undefined;
    const flow = (strategy?.flow ?? startedPayload?.flowTree ?? null) as Strategy["flow"] | null;
    return {
      runId,
      status: run?.status ?? row!.status,
      segment: run?.segment ?? row!.segment,
      cwd: run?.config.cwd ?? row!.cwd,
      strategyName: strategy?.name ?? row!.strategyName,
      strategyPath: run?.config.strategyPath ?? row!.strategyPath,
      modelOverride: run?.config.modelOverride ?? row?.modelOverride ?? null,
      startedAt: row ? new Date(row.startedAt).toISOString() : null,
      completedAt: row?.completedAt ? new Date(row.completedAt).toISOString() : null,
      input: row?.input ?? null,
      result: row?.result ?? null,
      error: row?.errorCode ? { code: row.errorCode, message: row.errorMessage ?? "" } : null,
      usage: run && run.status === "running" ? { ...run.usage } : { promptTokens: row?.promptTokens ?? 0, completionTokens: row?.completionTokens ?? 0 },
      pendingRequests: run?.pendingRequests() ?? [],
      agents: strategy ? Object.keys(strategy.agents) : (startedPayload?.agents ?? []),
      flowTree: flow,
      graph: flow ? flowGraph({ flow } as Strategy) : null,
      warnings: run?.warnings ?? [],
    };
  }

  /** Every open input, question and permission request of the live runs (for the inbox). */
  openRequests(): Array<{ runId: string; strategyName: string; request: PendingRequest }> {
    const out: Array<{ runId: string; strategyName: string; request: PendingRequest }> = [];
    for (const run of this.active.values()) {
      if (run.status !== "running") continue;
      for (const request of run.pendingRequests()) out.push({ runId: run.runId, strategyName: run.config.strategy.name, request });
    }
    return out;
  }

  row(runId: string) {
    return this.deps.db.select().from(runs).where(eq(runs.id, runId)).get();
  }

  timeline(runId: string, afterId = 0, limit = 1000): BusEvent[] {
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
   * On server start: a run whose segment was waiting on a human resumes waiting (its completed
   * steps are not run again); any other interrupted segment ends with error INTERRUPTED and stays
   * continuable. No run is left "running".
   */
  async recover(): Promise<{ resumed: string[]; interrupted: string[] }> {
    const resumed: string[] = [];
    const interrupted: string[] = [];
    for (const row of this.deps.db.select().from(runs).where(eq(runs.status, "running")).all()) {
      const events = readRunEvents(this.deps.bus.store, row.id);
      const seg = lastSegment(events);
      if (seg.completed && seg.completed.payload.segment === row.segment) {
        const p = seg.completed.payload;
        this.deps.db.update(runs).set({ status: p.status, completedAt: Date.parse(seg.completed.ts), errorCode: p.error?.code ?? null, errorMessage: p.error?.message ?? null }).where(eq(runs.id, row.id)).run();
        continue;
      }
      // waiting for a human, or in a CLI step whose agent runs on detached: the run goes on
      const cliStepOpen = [...seg.memo.cliAgents.keys()].some((stepKey) => !seg.memo.steps.has(stepKey));
      if (seg.started && (seg.memo.openRequests.size > 0 || cliStepOpen) && (await this.resumeWaiting(row, seg, events))) {
        resumed.push(row.id);
        continue;
      }
      const error = { code: "INTERRUPTED", message: "The server stopped while this run was running; it can be continued (continue_run)" };
      this.deps.db.update(runs).set({ status: "error", completedAt: Date.now(), errorCode: error.code, errorMessage: error.message }).where(eq(runs.id, row.id)).run();
      await this.deps.bus.publish("run.completed", { segment: row.segment, status: "error", error, requestId: seg.started?.payload.requestId }, { runId: row.id });
      interrupted.push(row.id);
    }
    return { resumed, interrupted };
  }

  private async resumeWaiting(row: typeof runs.$inferSelect, seg: ReturnType<typeof lastSegment>, events: BusEvent[]): Promise<boolean> {
    const started = seg.started!.payload;
    let loaded;
    try {
      loaded = await loadStrategyFile(isAbsolute(started.strategyPath) ? started.strategyPath : resolve(started.cwd, started.strategyPath), { cwd: started.cwd });
    } catch (err) {
      this.deps.log.warn({ runId: row.id, err: String(err) }, "cannot reload the strategy of a waiting run");
      return false;
    }
    const run = new RunState(
      { runId: row.id, strategy: loaded.strategy, strategyPath: loaded.path, cwd: started.cwd, manifestPath: started.manifestPath, modelOverride: started.modelOverride },
      this.deps.bus,
      this.deps.createPolicy(started.cwd),
    );
    run.segment = row.segment - 1;
    run.beginSegment(started.requestId);
    run.memo = seg.memo;
    run.usage.promptTokens = seg.usage.promptTokens;
    run.usage.completionTokens = seg.usage.completionTokens;
    run.startedAt = row.startedAt;
    for (const record of agentRecords(events)) {
      const list = run.history.get(record.agentName) ?? [];
      list.push(record);
      run.history.set(record.agentName, list);
    }
    this.remember(run);
    this.execute(run, started.initialInput ?? "");
    return true;
  }

  /** Stop everything (server shutdown): runs end as they are; recover() picks them up. */
  async shutdown(): Promise<void> {
    this.closing = true;
    const running = [...this.active.values()].filter((r) => r.status === "running");
    for (const run of running) {
      run.serverStopping = true;
      run.cancel("Server shutting down");
    }
    await Promise.all(running.map((r) => r.finished?.catch(() => {})));
  }
}
