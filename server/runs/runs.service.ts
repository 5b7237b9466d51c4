import { randomUUID } from "node:crypto";
import { resolve } from "node:path";
import type { BusEvent } from "../../shared/events";
import type { PendingRequest, PermissionDecision, RunSummary } from "../../shared/runs";
import type { Store } from "../db/store";
import { DomainError } from "../errors";
import type { EventBus } from "../events/bus";
import type { Logger } from "../log";
import { resolveStrategyPath } from "../strategies/discovery";
import { loadStrategyFile } from "../strategies/loader";
import { GlobError } from "../tools/globs";
import { callAgent, type AgentCallDeps } from "./agent-call";
import { FlowExecutor } from "./flow-executor";
import { RunLifecycle, type RunEnd } from "./run-lifecycle";
import { recoverRuns } from "./run-recovery";
import { inMemorySummary, runDetail, runSummary } from "./run-views";
import { RunCancelledError, RunState, type RunConfig, type PolicyPort } from "./run-state";
import { agentRecords, humanInputs, readRunEvents } from "./timeline";

export type RunsDeps = AgentCallDeps & {
  store: Store;
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
 * `runs` table is the listing projection of each run's latest segment, written by RunLifecycle
 * alone (with the event of each move, in one transaction).
 */
export class RunsService {
  private readonly active = new Map<string, RunState>();
  private readonly lifecycle: RunLifecycle;
  /** Set on shutdown: interrupted segments are left for recover() at the next start. */
  private closing = false;

  constructor(private readonly deps: RunsDeps) {
    this.lifecycle = new RunLifecycle(deps.store, deps.bus);
  }

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
    return { run, attached: false };
  }

  /** The conversation a prepared run carries (records, inputs), as run_prepared sends it. */
  async conversation(run: RunState) {
    const events = run.continuation || run.segment > 0 ? await readRunEvents(this.deps.bus.store, run.runId) : [];
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
    await this.lifecycle.transition(run, { event: continuation ? "continue" : "start", input, requestId });
    for (const w of run.warnings) await run.emit("run.warning", w);
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
    if (run.segment !== segment || run.status !== "running" || this.closing) return;
    await this.lifecycle.transition(run, end).catch(() => {});
  }

  /** Stop a run: a prepared one is released, a running one aborted (CANCELLED exactly once). */
  async stop(runId: string): Promise<void> {
    const run = this.active.get(runId);
    if (!run) {
      if (await this.row(runId)) return;
      throw fail("RUN_NOT_FOUND", `Run not found: ${runId}`, "NOT_FOUND");
    }
    if (run.status === "pending") {
      this.active.delete(runId);
      await this.lifecycle.transition(run, { event: "cancel", error: { code: "CANCELLED", message: "Run cancelled by client" } });
      this.deps.onEphemeral?.(runId, { type: "strategy_error", runId, error: { code: "CANCELLED", message: "Run cancelled by client" } });
      return;
    }
    if (run.status !== "running") return;
    run.cancel("Run cancelled");
    await run.finished;
  }

  async steer(runId: string, text: string): Promise<void> {
    const run = this.active.get(runId);
    if (!run || run.status !== "running") throw fail("RUN_NOT_STEERABLE", `Run ${runId} is not running${run ? ` (${run.status})` : ""}: only a running run can be steered`, "CONFLICT");
    run.queueSteering(text);
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
    try {
      run.policy.update(change);
    } catch (err) {
      throw err instanceof GlobError ? fail("BAD_INPUT", err.message) : err;
    }
    const policies = run.policy.toJSON();
    if (run.status !== "pending") await run.emit("run.policy_updated", { tool: change.tool ?? "*", policies, ...(requestId ? { requestId } : {}) });
    return policies;
  }

  async list(filter: { cwd?: string } = {}): Promise<RunSummary[]> {
    return (await this.lifecycle.rows(filter.cwd ? resolve(filter.cwd) : undefined)).map((row) => runSummary(row, this.active.get(row.id)));
  }

  /** Runs held in memory, as list_strategies reports them. */
  listInMemory() {
    return [...this.active.values()].map(inMemorySummary);
  }

  /** One run: its listing row, live state and what it waits on. */
  async get(runId: string) {
    const row = await this.row(runId);
    const run = this.active.get(runId);
    if (!row && !run) throw fail("RUN_NOT_FOUND", `Run not found: ${runId}`, "NOT_FOUND");
    return runDetail(runId, row, run, this.deps.bus.store);
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
    return this.lifecycle.row(runId);
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

  /** On server start: waiting segments resume, the others end INTERRUPTED (run-recovery.ts). */
  recover(): Promise<{ resumed: string[]; interrupted: string[] }> {
    return recoverRuns({
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
    return new RunState(config, this.deps.bus, this.deps.createPolicy(config.cwd));
  }

  /** Stop everything (server shutdown): runs end as they are; recover() picks them up. */
  async shutdown(): Promise<void> {
    this.closing = true;
    const running = [...this.active.values()].filter((r) => r.status === "running");
    for (const run of running) run.stopForShutdown();
    await Promise.all(running.map((r) => r.finished?.catch(() => {})));
  }
}
