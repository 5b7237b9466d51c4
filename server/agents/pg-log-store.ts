import type { Sql } from "postgres";
import { chunksOf, LEGACY_PROVIDER, linesIn, LogGroupCommit, type AgentLogStorage, type ChunkRef, type CommitResult, type LogAppend, type LogChunk, type StoredLine } from "./log-store";
import type { SessionBounds } from "../../shared/agents";
import { leaseLost, type EventFence } from "../events/event-store";

type Returned = { id: string; seq: number; first_line: number };
/** A chunk of one statement: its seq and first line counted from the agent's counters before it. */
type Planned = [k: number, session: number, at: number, lineCount: number, bytes: number, content: string];

/**
 * The log on PostgreSQL (the twin of AgentLogStore), shared by every server on the database. A
 * batch writes each agent's lines in ONE statement: the agent's counters (line count, chunk seq,
 * output offset) move by what is appended, and the chunks are inserted numbered from where they
 * were (`agent_log_chunks.id` is an identity: RETURNING id). One statement is atomic and locks
 * only that agent's row while it runs, so two servers appending to one log (a note written by
 * one while another tails the agent) take turns, and no two locks are ever held together (no
 * deadlock with an event's transaction moving several agents). The agents' statements of one
 * batch run concurrently; batches commit one after the other.
 *
 * PostgreSQL text cannot hold NUL: a NUL in a line is stored as U+FFFD.
 */
export class PgAgentLogStore extends LogGroupCommit implements AgentLogStorage {
  constructor(private readonly sql: Sql) {
    super();
  }

  protected async commit(batch: readonly LogAppend[]): Promise<CommitResult> {
    const byAgent = new Map<string, number[]>();
    batch.forEach((w, i) => byAgent.set(w.agentId, [...(byAgent.get(w.agentId) ?? []), i]));
    const results: CommitResult = new Array<ChunkRef[] | Error>(batch.length);
    await Promise.all(
      [...byAgent].map(async ([agentId, indexes]) => {
        // one statement per run of appends under the same fence (the watcher's lines, a note), in order
        for (const run of runsOf(indexes, (i) => fenceKey(batch[i]!.fence))) {
          try {
            const refs = await this.appendAgent(
              agentId,
              run.map((i) => batch[i]!),
              batch[run[0]!]!.fence,
            );
            run.forEach((i, n) => (results[i] = refs[n]!));
          } catch (err) {
            const error = err instanceof Error ? err : new Error(String(err));
            for (const i of run) results[i] = error;
          }
        }
      }),
    );
    return results;
  }

  /**
   * One agent's appends of a batch, in order, in one statement; per append, its chunks. A fence
   * holds its lease row (FOR SHARE) until the statement commits: a takeover waits for it, and a
   * statement after the takeover stores nothing (LEASE_LOST).
   */
  private async appendAgent(agentId: string, appends: readonly LogAppend[], fence?: EventFence): Promise<ChunkRef[][]> {
    const planned: Planned[] = [];
    const owners: number[] = [];
    let lines = 0;
    let endOffset: number | null = null;
    appends.forEach((w, n) => {
      for (const chunk of chunksOf(w.lines)) {
        const content = chunk.join("\n").replaceAll("\u0000", "\uFFFD");
        planned.push([planned.length + 1, w.session, lines, chunk.length, content.length, content]);
        owners.push(n);
        lines += chunk.length;
      }
      if (w.endOffset !== undefined) endOffset = w.endOffset;
    });
    const chunks = planned.length;
    const now = Date.now();
    const values = this.sql(planned as unknown as string[][]);
    // without a fence, held.fenced is false and the lines are stored (its lookup of kind '' finds no row)
    const [kind, entity, server, epoch] = fence ? [fence.kind, fence.id, fence.serverId, fence.epoch] : ["", "", "", 0];
    const fenced = this.sql`fenced AS (
        SELECT 1 FROM leases WHERE kind = ${kind}::text AND entity_id = ${entity}::text AND server_id = ${server}::text AND epoch = ${epoch}::int FOR SHARE
      ), held AS (SELECT ${fence !== undefined}::boolean AS fenced, EXISTS (SELECT 1 FROM fenced) AS ok)`;
    let rows = await this.sql<Returned[]>`
      WITH ${fenced}, moved AS (
        UPDATE agents SET line_count = line_count + ${lines}::int, chunk_seq = chunk_seq + ${chunks}::int, output_offset = COALESCE(${endOffset}::bigint, output_offset)
        FROM held WHERE id = ${agentId}::text AND (held.ok OR NOT held.fenced)
        RETURNING line_count - ${lines}::int AS line0, chunk_seq - ${chunks}::int AS seq0
      ), remembered AS (
        INSERT INTO agent_logs (agent_id, provider) SELECT id, provider FROM agents WHERE id = ${agentId}::text ON CONFLICT DO NOTHING
      )
      INSERT INTO agent_log_chunks (agent_id, session, seq, first_line, line_count, bytes, content, created_at)
      SELECT ${agentId}::text, v.session::int, moved.seq0 + v.k::int, moved.line0 + v.at::int, v.n::int, v.bytes::int, v.content::text, ${now}::bigint
      FROM moved, (VALUES ${values}) AS v (k, session, at, n, bytes, content)
      RETURNING id::text AS id, seq, first_line`;
    if (rows.length === 0) {
      // the agent's row is gone (its log outlives it): numbered after the chunks stored
      rows = await this.sql<Returned[]>`
        WITH ${fenced}, top AS (
          SELECT COALESCE(MAX(first_line + line_count), 0) AS line0, COALESCE(MAX(seq), 0) AS seq0 FROM agent_log_chunks WHERE agent_id = ${agentId}::text
        )
        INSERT INTO agent_log_chunks (agent_id, session, seq, first_line, line_count, bytes, content, created_at)
        SELECT ${agentId}::text, v.session::int, top.seq0 + v.k::int, top.line0 + v.at::int, v.n::int, v.bytes::int, v.content::text, ${now}::bigint
        FROM held, top, (VALUES ${values}) AS v (k, session, at, n, bytes, content)
        WHERE held.ok OR NOT held.fenced
        RETURNING id::text AS id, seq, first_line`;
      if (rows.length === 0 && fence) throw leaseLost(fence.kind, fence.id, "its lines");
    }
    if (rows.length !== chunks) throw new Error(`Storing ${chunks} chunk(s) of agent ${agentId}'s log stored ${rows.length}`);
    const stored = [...rows].sort((a, b) => a.seq - b.seq);
    const refs: ChunkRef[][] = appends.map(() => []);
    planned.forEach(([k, session, , lineCount, bytes], i) => {
      const row = stored[k - 1]!;
      refs[owners[i]!]!.push({ chunkId: Number(row.id), session, fromLine: row.first_line, lineCount, bytes });
    });
    return refs;
  }

  forget(): void {
    // nothing cached: the counters live in the agents' rows
  }

  async readLines(agentId: string, fromLine: number, count: number): Promise<StoredLine[]> {
    const rows = await this.sql<Array<{ session: number; firstLine: number; lineCount: number; content: string }>>`
      SELECT session, first_line AS "firstLine", line_count AS "lineCount", content FROM agent_log_chunks
      WHERE agent_id = ${agentId} AND first_line >= COALESCE((SELECT MAX(first_line) FROM agent_log_chunks WHERE agent_id = ${agentId} AND first_line <= ${fromLine}::int), 0)
        AND first_line < ${fromLine + count}::int
      ORDER BY first_line`;
    return linesIn(rows, fromLine, count);
  }

  async chunk(chunkId: number): Promise<LogChunk | undefined> {
    const [row] = await this.sql<Array<{ agentId: string; session: number; firstLine: number; content: string }>>`
      SELECT agent_id AS "agentId", session, first_line AS "firstLine", content FROM agent_log_chunks WHERE id = ${chunkId}::bigint`;
    if (!row) return undefined;
    return { agentId: row.agentId, session: row.session, firstLine: row.firstLine, lines: row.content.split("\n") };
  }

  async providerOf(agentId: string): Promise<string> {
    const [row] = await this.sql<Array<{ provider: string }>>`SELECT provider FROM agent_logs WHERE agent_id = ${agentId}`;
    return row?.provider ?? LEGACY_PROVIDER;
  }

  async totalLines(agentId: string): Promise<number> {
    const [row] = await this.sql<Array<{ lines: number }>>`SELECT (first_line + line_count)::int AS lines FROM agent_log_chunks WHERE agent_id = ${agentId} ORDER BY first_line DESC LIMIT 1`;
    return row?.lines ?? 0;
  }

  async sessions(agentId: string): Promise<SessionBounds[]> {
    return [
      ...(await this.sql<SessionBounds[]>`
        SELECT session, MIN(first_line)::int AS "fromLine", MAX(first_line + line_count)::int AS "toLine" FROM agent_log_chunks
        WHERE agent_id = ${agentId} GROUP BY session ORDER BY session`),
    ];
  }
}

const fenceKey = (f: EventFence | undefined): string => (f ? `${f.kind}:${f.id}@${f.epoch}/${f.serverId}` : "");

/** `items` cut into runs of neighbours with the same key, in order. */
function runsOf<T>(items: readonly T[], keyOf: (item: T) => string): T[][] {
  const runs: T[][] = [];
  let last: string | undefined;
  for (const item of items) {
    const k = keyOf(item);
    if (runs.length > 0 && k === last) runs[runs.length - 1]!.push(item);
    else runs.push([item]);
    last = k;
  }
  return runs;
}
