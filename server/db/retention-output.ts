import { and, count, desc, eq, inArray, isNull, lt, lte, notExists, notInArray, or, sql } from "drizzle-orm";
import { breathe, ENDED_AGENT, isOld, type Horizon } from "./retention-rules";
import { first, type Store } from "./store";

/**
 * Retention of agent output (`agent_log_chunks`): an agent's output goes whole, never half a log,
 * and only once the agent is ended (idle, stopped, crashed) or deleted. It goes when its newest
 * chunk is old: written before the age cutoff, or, with a byte budget, not among the newest
 * `maxBytes` of output of all agents (so the oldest agents' output goes first; an agent whose
 * log straddles the budget keeps all of it). Its `agent.output_produced` events may outlive it: they then
 * read as empty. A deleted agent's `agent_logs` row (its provider) goes with the last of its
 * output; an agent that still has a row keeps it, for the output it may write when resumed.
 */

export type OutputReport = { agents: number; chunks: number; bytes: number };

type OutputOptions = { beforeTs?: number; maxBytes?: number; dryRun: boolean; batch: number; signal: AbortSignal | undefined };

/** Chunks read per page while measuring the newest output against the byte budget. */
const SCAN = 1000;

/** Remove (or count, dry) the output of ended agents past the horizon. False when stopped. */
export async function pruneAgentOutput(store: Store, options: OutputOptions, report: OutputReport): Promise<boolean> {
  const throughId = options.maxBytes !== undefined ? await budgetBound(store, options.maxBytes, options.signal) : undefined;
  if (throughId === null) return false;
  const h: Horizon = { beforeTs: options.beforeTs, throughId };
  if (h.beforeTs === undefined && h.throughId === undefined) return true;
  const { agents, agentLogs } = store.t;
  // every agent that wrote a log (agent_logs is written with its first chunk), ended or deleted
  const candidates = await store.read
    .select({ agentId: agentLogs.agentId, status: agents.status })
    .from(agentLogs)
    .leftJoin(agents, eq(agents.id, agentLogs.agentId))
    .where(or(isNull(agents.id), inArray(agents.status, [...ENDED_AGENT])));
  for (const [i, c] of candidates.entries()) {
    if (!(await pruneAgent(store, options, h, c.agentId, report))) return false;
    if (i % 50 === 49 && !(await breathe(options.signal))) return false;
  }
  return true;
}

/**
 * The id of the newest chunk past the byte budget (it and every older chunk are beyond it), read
 * from the newest down; undefined when all output fits; null when stopped.
 */
async function budgetBound(store: Store, maxBytes: number, signal: AbortSignal | undefined): Promise<number | undefined | null> {
  const { agentLogChunks: chunks } = store.t;
  let total = 0;
  for (let cursor = Number.MAX_SAFE_INTEGER; ; ) {
    const page = await store.read.select({ id: chunks.id, bytes: chunks.bytes }).from(chunks).where(lt(chunks.id, cursor)).orderBy(desc(chunks.id)).limit(SCAN);
    for (const c of page) {
      total += c.bytes;
      if (total > maxBytes) return c.id;
    }
    if (page.length < SCAN) return undefined;
    cursor = page[page.length - 1]!.id;
    if (!(await breathe(signal))) return null;
  }
}

async function pruneAgent(store: Store, options: OutputOptions, h: Horizon, agentId: string, report: OutputReport): Promise<boolean> {
  const { agents, agentLogChunks: chunks, agentLogs } = store.t;
  const newest = await first(
    store.read.select({ id: chunks.id, ts: chunks.createdAt }).from(chunks).where(eq(chunks.agentId, agentId)).orderBy(desc(chunks.firstLine)).limit(1),
  );
  if (!newest || !isOld(h, newest)) return true;
  const ofAgent = and(eq(chunks.agentId, agentId), lte(chunks.id, newest.id));
  if (options.dryRun) {
    const [n] = await store.read.select({ chunks: count(), bytes: sql<number>`coalesce(sum(${chunks.bytes}), 0)`.mapWith(Number) }).from(chunks).where(ofAgent);
    report.agents += 1;
    report.chunks += n?.chunks ?? 0;
    report.bytes += n?.bytes ?? 0;
    return true;
  }
  // re-checked by every statement: an agent resumed meanwhile keeps what is left
  const live = store.read
    .select({ one: sql`1` })
    .from(agents)
    .where(and(eq(agents.id, agentId), notInArray(agents.status, [...ENDED_AGENT])));
  let removedAny = false;
  for (;;) {
    const removed = await store.tx(async (tx) => {
      const ids = tx.select({ id: chunks.id }).from(chunks).where(ofAgent).orderBy(chunks.id).limit(options.batch);
      const rows = await tx
        .delete(chunks)
        .where(and(inArray(chunks.id, ids), notExists(live)))
        .returning({ bytes: chunks.bytes });
      if (rows.length < options.batch) {
        // the last of a deleted agent's output: its provider row goes too
        const agentRow = tx.select({ one: sql`1` }).from(agents).where(eq(agents.id, agentId));
        await tx.delete(agentLogs).where(and(eq(agentLogs.agentId, agentId), notExists(agentRow)));
      }
      return rows;
    });
    if (removed.length > 0 && !removedAny) {
      removedAny = true;
      report.agents += 1;
    }
    report.chunks += removed.length;
    for (const r of removed) report.bytes += r.bytes;
    if (removed.length < options.batch) break;
    if (!(await breathe(options.signal))) return false;
  }
  return breathe(options.signal);
}
