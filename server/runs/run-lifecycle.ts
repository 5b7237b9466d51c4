import { and, eq, inArray } from "drizzle-orm";
import type { BusEvent } from "../../shared/events";
import type { RunError, Usage } from "../../shared/runs";
import type { RunStatus } from "../../shared/statuses";
import { first, type Store, type TxDb } from "../db/store";
import { DomainError } from "../errors";
import type { EventBus } from "../events/bus";
import type { ResumePoint, RunState } from "./run-state";
import type { runs } from "./runs.sql";

/** What happens to a run. */
export const RUN_LIFECYCLE_EVENTS = ["start", "continue", "resume", "complete", "fail", "cancel", "interrupt"] as const;
export type RunLifecycleEvent = (typeof RUN_LIFECYCLE_EVENTS)[number];

/**
 * The run transition table: from each status, the events that move it and where to. `pending` is
 * a prepared run, in memory only (a prepared continuation's row keeps its last segment's end until
 * continue writes `running`). The ended statuses end one segment: continuing a run prepares a new
 * pending state from its timeline.
 */
export const RUN_TRANSITIONS: Readonly<Record<RunStatus, Readonly<Partial<Record<RunLifecycleEvent, RunStatus>>>>> = {
  pending: { start: "running", continue: "running", resume: "running", cancel: "cancelled" },
  running: { complete: "completed", fail: "error", cancel: "cancelled", interrupt: "error" },
  completed: {},
  error: {},
  cancelled: {},
};

export type RunTransitionCode = "RUN_TRANSITION_INVALID";

/** Where `event` takes a run that is `from`; refuses a move the table does not hold. */
export function nextRunStatus(runId: string, from: RunStatus, event: RunLifecycleEvent): RunStatus {
  const to = RUN_TRANSITIONS[from][event];
  if (!to) throw invalidMove(runId, from, event);
  return to;
}

function invalidMove(runId: string, from: RunStatus, event: RunLifecycleEvent): DomainError<RunTransitionCode> {
  const allowed = Object.keys(RUN_TRANSITIONS[from]);
  const hint = allowed.length > 0 ? `from ${from} a run can: ${allowed.join(", ")}` : `its segment is over: prepare it again to continue`;
  return new DomainError("RUN_TRANSITION_INVALID", `Run ${runId} is ${from} and cannot ${event} (${hint})`, { kind: "CONFLICT", details: { runId, from, event } });
}

/** How a segment ends: its result, or its error as data. */
export type RunEnd = { event: "complete"; result: string; flowUsage?: Usage } | { event: "fail" | "cancel" | "interrupt"; error: RunError };

/** What a move carries, by event. */
export type RunMove = { event: "start" | "continue"; input: string; requestId?: string } | { event: "resume"; at: ResumePoint } | RunEnd;

export type RunRow = typeof runs.$inferSelect;
type Ended = "completed" | "error" | "cancelled";

const ENDED: Ended[] = ["completed", "error", "cancelled"];
const ENDING: Record<Ended, RunLifecycleEvent> = { completed: "complete", error: "fail", cancelled: "cancel" };
const usd = (n: number) => Math.round(n * 1e6) / 1e6;

/**
 * The owner of the `runs` table (the listing projection of each run's latest segment) and the
 * one door of a run's status: every move is checked against RUN_TRANSITIONS, and its row write
 * and its bus event are stored in one transaction (the write joins the event's group commit, as a
 * compare-and-set on the stored status). Nothing else writes the table.
 */
export class RunLifecycle {
  constructor(
    private readonly store: Store,
    private readonly bus: EventBus,
    /** Inside each row write: refuse it when this server no longer owns the run (its lease's epoch; server/cluster/leases.ts). */
    private readonly fence: (tx: TxDb, runId: string) => Promise<void> = async () => {},
  ) {}

  /**
   * Move a live run. start/continue: a new segment, the row upserted `running` with run.started.
   * complete/fail/cancel/interrupt: the segment ends, the row with run.completed. resume (after a
   * restart) and cancel of a prepared run change memory only: their row is already right.
   */
  async transition(run: RunState, move: RunMove): Promise<void> {
    switch (move.event) {
      case "start":
      case "continue":
        return this.begin(run, move);
      case "resume":
        return run.resumeSegment(move.at);
      case "cancel":
        if (run.status === "pending") return run.release();
        return this.end(run, move);
      default:
        return this.end(run, move);
    }
  }

  /** A stored run left `running` by a stopped server, with no live state: it ends INTERRUPTED. */
  async interrupt(row: RunRow, error: RunError, requestId: string | undefined): Promise<void> {
    const status = nextRunStatus(row.id, row.status, "interrupt") as Ended;
    const set = { status, completedAt: Date.now(), errorCode: error.code, errorMessage: error.message };
    await this.bus.publish("run.completed", { segment: row.segment, status, error, requestId }, { runId: row.id }, { write: (tx) => this.update(tx, row.id, row.segment, "interrupt", set) });
  }

  /**
   * A stored row still `running` whose segment's run.completed is already in the timeline (the
   * two were separate writes in older versions): the row catches up with the event.
   */
  async reconcile(row: RunRow, completed: BusEvent<"run.completed">): Promise<void> {
    const p = completed.payload;
    nextRunStatus(row.id, row.status, ENDING[p.status]);
    const set = { status: p.status, completedAt: Date.parse(completed.ts), errorCode: p.error?.code ?? null, errorMessage: p.error?.message ?? null };
    await this.store.tx((tx) => this.update(tx, row.id, row.segment, ENDING[p.status], set));
  }

  row(runId: string, db: Pick<TxDb, "select"> = this.store.read): Promise<RunRow | undefined> {
    const { runs } = this.store.t;
    return first(db.select().from(runs).where(eq(runs.id, runId)));
  }

  /** Rows whose latest segment was running when the server last stopped (or still runs). */
  running(): Promise<RunRow[]> {
    const { runs } = this.store.t;
    return this.store.read.select().from(runs).where(eq(runs.status, "running"));
  }

  private async begin(run: RunState, move: Extract<RunMove, { event: "start" | "continue" }>): Promise<void> {
    run.beginSegment(move.requestId, move.event);
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
      input: move.input,
      result: null,
      errorCode: null,
      errorMessage: null,
      promptTokens: 0,
      completionTokens: 0,
    };
    const write = async (tx: TxDb) => {
      const { runs } = this.store.t;
      await this.fence(tx, run.runId);
      // a new row, or the row of a run whose last segment ended; never one still running
      const stored = await tx
        .insert(runs)
        .values({ id: run.runId, ...values })
        .onConflictDoUpdate({ target: runs.id, set: values, setWhere: inArray(runs.status, ENDED) })
        .returning({ id: runs.id });
      if (stored.length === 0) throw invalidMove(run.runId, (await this.row(run.runId, tx))?.status ?? "running", move.event);
    };
    await this.bus.publish(
      "run.started",
      {
        segment: run.segment,
        strategyPath: c.strategyPath,
        strategyName: c.strategy.name,
        cwd: c.cwd,
        agents: Object.keys(c.strategy.agents),
        flowTree: c.strategy.flow as unknown as Record<string, unknown>,
        initialInput: move.input,
        manifestPath: c.manifestPath,
        modelOverride: c.modelOverride,
        continuation: move.event === "continue",
        requestId: move.requestId,
      },
      { runId: run.runId },
      { write },
    );
  }

  private async end(run: RunState, move: RunEnd): Promise<void> {
    const segment = run.segment;
    run.endSegment(move.event);
    const status = run.status as Ended;
    const result = move.event === "complete" ? move.result : undefined;
    const error = move.event === "complete" ? undefined : move.error;
    const set = {
      status,
      completedAt: run.completedAt,
      result: result ?? null,
      errorCode: error?.code ?? null,
      errorMessage: error?.message ?? null,
      promptTokens: run.usage.promptTokens,
      completionTokens: run.usage.completionTokens,
      costUsd: usd(run.spent.usd),
    };
    await this.bus.publish(
      "run.completed",
      { segment, status, result, usage: { ...run.usage }, ...(move.event === "complete" && move.flowUsage ? { flowUsage: move.flowUsage } : {}), error, requestId: run.requestId },
      { runId: run.runId },
      { write: (tx) => this.update(tx, run.runId, segment, move.event, set) },
    );
  }

  /** Write the end of a running segment; refused when the stored row is not that segment running. */
  private async update(tx: TxDb, runId: string, segment: number, event: RunLifecycleEvent, set: Partial<RunRow>): Promise<void> {
    const { runs } = this.store.t;
    await this.fence(tx, runId);
    const stored = await tx
      .update(runs)
      .set(set)
      .where(and(eq(runs.id, runId), eq(runs.status, "running"), eq(runs.segment, segment)))
      .returning({ id: runs.id });
    if (stored.length === 0) throw invalidMove(runId, (await this.row(runId, tx))?.status ?? "pending", event);
  }
}
