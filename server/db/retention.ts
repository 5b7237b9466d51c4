import { and, count, desc, eq, gt, inArray, isNull, lt, lte, notExists, notInArray, or, sql } from "drizzle-orm";
import { pruneAgentOutput, type OutputReport } from "./retention-output";
import { breathe, ENDED_AGENT, ENDED_RUN, isOld, type Horizon } from "./retention-rules";
import { first, type Store } from "./store";

/**
 * Retention: removes old events and agent output from a store (SQLite or PostgreSQL), never what a
 * live run, agent or daemon still needs. `prune` is what the server runs periodically when
 * SWITCHYARD_RETENTION_* is set (retention-pruner.ts) and what `yard db prune` runs at once.
 *
 * What goes, and what never does (docs/ARCHITECTURE.md, the event flow; README, "Retention"):
 * - An event is "old" when it was published before the age cutoff (`olderThanDays`), or when its
 *   id is not among the newest `keepEvents` ids.
 * - Runs go whole: a run whose row is ended (completed, error, cancelled; or that has no row) and
 *   whose newest event is old loses its row and every event of its timeline, never half of it (a
 *   finished run's timeline is what the dashboard shows and what `continue` rebuilds from: a run
 *   past retention can no longer be shown or continued). A pending or running run keeps all.
 *   An event carrying a runId belongs to its run.
 * - Any other event goes when old, unless its agent (scope agentId) is still at work or waiting
 *   (any status but idle, stopped, crashed; a deleted agent counts as ended) or its conversation
 *   is still pending. Daemon events go when old whether or not the daemon exists (its files and
 *   queue are what it resumes from); the daemon queue is never touched.
 * - The newest event stays, always: the appenders number after max(id), so deleting it would
 *   hand its id out again.
 * - Agent output goes whole per agent (retention-output.ts).
 *
 * Small batches: each deletion is one short transaction of at most `batch` rows, and the pass
 * yields to the event loop between them, so a prune never holds the database (nor, on SQLite,
 * the server) for long. Every deletion re-checks its condition in its own statement (a run's row
 * is deleted only while still ended, an agent's events only while it is ended), so a pass racing
 * a continuation or a second pruner on the same database removes nothing it should not. A dry run
 * reads the same candidates and counts what the same statements would delete.
 */

export type RetentionLimits = {
  /** Events and agent output published more than this many days ago may go. */
  olderThanDays?: number;
  /** The newest this many event ids are kept; older events may go. */
  keepEvents?: number;
  /** Agent output beyond the newest this many bytes may go (whole agents, oldest first). */
  maxOutputBytes?: number;
};

export type PruneOptions = RetentionLimits & {
  /** Count what would go; delete nothing. */
  dryRun?: boolean;
  /** The clock the age cutoff is measured from (tests). */
  now?: number;
  /** Rows per transaction (default 500). */
  batch?: number;
  /** Stops the pass between batches (the server's stop). */
  signal?: AbortSignal;
};

export type PruneReport = {
  dryRun: boolean;
  /** Events removed (or, dry, that would be), the runs' timelines included. */
  events: number;
  /** Runs removed whole: their row and every event of their timeline. */
  runs: number;
  /** Agents whose stored output was removed whole, with its chunks and bytes. */
  output: OutputReport;
  /** The newest event id, kept. */
  newestEventId: number;
  /** False when the pass was stopped before it finished (`signal`). */
  complete: boolean;
};

const DAY_MS = 86_400_000;
/** Events read per page while looking for old ones. */
const SCAN = 1000;

/** Remove (or count, dry) what the limits allow. Limits left unset remove nothing. */
export async function prune(store: Store, options: PruneOptions): Promise<PruneReport> {
  const now = options.now ?? Date.now();
  const beforeTs = options.olderThanDays !== undefined ? now - options.olderThanDays * DAY_MS : undefined;
  const newestEventId = await store.events.maxId();
  const ctx: Pass = { store, dryRun: !!options.dryRun, batch: options.batch ?? 500, signal: options.signal, newest: newestEventId };
  const report: PruneReport = { dryRun: ctx.dryRun, events: 0, runs: 0, output: { agents: 0, chunks: 0, bytes: 0 }, newestEventId, complete: true };
  const eventHorizon: Horizon = { beforeTs, throughId: options.keepEvents !== undefined ? newestEventId - options.keepEvents : undefined };
  if (eventHorizon.beforeTs !== undefined || eventHorizon.throughId !== undefined) {
    report.complete = await pruneEvents(ctx, eventHorizon, report);
  }
  if (report.complete && (beforeTs !== undefined || options.maxOutputBytes !== undefined)) {
    report.complete = await pruneAgentOutput(store, { beforeTs, maxBytes: options.maxOutputBytes, dryRun: ctx.dryRun, batch: ctx.batch, signal: ctx.signal }, report.output);
  }
  return report;
}

type Pass = { store: Store; dryRun: boolean; batch: number; signal: AbortSignal | undefined; newest: number };

/**
 * Walk the events from the oldest, a page at a time, until a page holds nothing old: each run met
 * is decided once (and removed whole, or kept whole), the other old events of the page are
 * removed in one statement that re-checks their agent and conversation. False when stopped.
 */
async function pruneEvents(ctx: Pass, h: Horizon, report: PruneReport): Promise<boolean> {
  const { events } = ctx.store.t;
  const runsSeen = new Set<string>();
  for (let cursor = 0; ; ) {
    const page = await ctx.store.read
      .select({ id: events.id, ts: events.ts, runId: events.runId })
      .from(events)
      .where(and(gt(events.id, cursor), lt(events.id, ctx.newest)))
      .orderBy(events.id)
      .limit(SCAN);
    const old = page.filter((e) => isOld(h, e));
    if (old.length === 0) return true;
    cursor = page[page.length - 1]!.id;
    const loose: number[] = [];
    for (const e of old) {
      if (e.runId === null) loose.push(e.id);
      else if (!runsSeen.has(e.runId)) {
        runsSeen.add(e.runId);
        if (!(await pruneRun(ctx, h, e.runId, report))) return false;
      }
    }
    for (let i = 0; i < loose.length; i += ctx.batch) {
      report.events += await pruneLoose(ctx, loose.slice(i, i + ctx.batch));
      if (!(await breathe(ctx.signal))) return false;
    }
    if (!(await breathe(ctx.signal))) return false;
  }
}

/**
 * One run, whole or not at all: its row ended (or missing) and its newest event old and not the
 * newest overall. The row goes with the first batch of its events (compare-and-set on its status:
 * a run continued meanwhile is left alone); the rest of the timeline in further batches (a pass
 * stopped half-way leaves a run without a row, which the next pass finishes).
 */
async function pruneRun(ctx: Pass, h: Horizon, runId: string, report: PruneReport): Promise<boolean> {
  const { events, runs } = ctx.store.t;
  const row = await first(ctx.store.read.select({ status: runs.status }).from(runs).where(eq(runs.id, runId)));
  if (row && !ENDED_RUN.includes(row.status)) return true;
  const last = await first(ctx.store.read.select({ id: events.id, ts: events.ts }).from(events).where(eq(events.runId, runId)).orderBy(desc(events.id)).limit(1));
  if (!last || last.id >= ctx.newest || !isOld(h, last)) return true;
  const ofRun = and(eq(events.runId, runId), lte(events.id, last.id));
  if (ctx.dryRun) {
    const [n] = await ctx.store.read.select({ n: count() }).from(events).where(ofRun);
    report.events += n?.n ?? 0;
    report.runs += 1;
    return true;
  }
  let rowGone = !row;
  for (;;) {
    const removed = await ctx.store.tx(async (tx) => {
      if (!rowGone) {
        const won = await tx
          .delete(runs)
          .where(and(eq(runs.id, runId), inArray(runs.status, [...ENDED_RUN])))
          .returning({ id: runs.id });
        if (won.length === 0) return -1;
        rowGone = true;
      }
      const ids = tx.select({ id: events.id }).from(events).where(ofRun).orderBy(events.id).limit(ctx.batch);
      return (await tx.delete(events).where(inArray(events.id, ids)).returning({ id: events.id })).length;
    });
    if (removed === -1) return true;
    report.events += removed;
    if (removed < ctx.batch) break;
    if (!(await breathe(ctx.signal))) return false;
  }
  report.runs += 1;
  return breathe(ctx.signal);
}

/** Old events without a run: removed unless their agent is not ended or their conversation is pending. */
async function pruneLoose(ctx: Pass, ids: number[]): Promise<number> {
  const { events, agents, conversations } = ctx.store.t;
  const one = sql`1`;
  const agentLive = ctx.store.read
    .select({ one })
    .from(agents)
    .where(and(eq(agents.id, events.agentId), notInArray(agents.status, [...ENDED_AGENT])));
  const openQuestion = ctx.store.read
    .select({ one })
    .from(conversations)
    .where(and(eq(conversations.id, events.conversationId), eq(conversations.status, "pending")));
  const removable = and(inArray(events.id, ids), or(isNull(events.agentId), notExists(agentLive)), or(isNull(events.conversationId), notExists(openQuestion)));
  if (ctx.dryRun) {
    const [n] = await ctx.store.read.select({ n: count() }).from(events).where(removable);
    return n?.n ?? 0;
  }
  return ctx.store.tx(async (tx) => (await tx.delete(events).where(removable).returning({ id: events.id })).length);
}
