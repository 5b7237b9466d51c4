import { sql as q } from "drizzle-orm";
import { drizzle, type PostgresJsDatabase } from "drizzle-orm/postgres-js";
import type { Sql } from "postgres";
import { currentEventType, type BusEvent, type EventScope, type ScopeFilter, type ScopeKind } from "../../shared/events";
import * as pgSchema from "../db/pg/schema";
import type { RowWrite, TxDb } from "../db/store";
import type { EventRow, EventStorage } from "./event-store";

/** The advisory lock every appender takes for its transaction: one ordered appender per database. */
export const EVENTS_APPEND_LOCK = 7_422_019;
/** Announces a commit of events: its payload is the newest id of the batch. */
export const EVENTS_CHANNEL = "switchyard_events";

const COLUMN: Record<ScopeKind, string> = { run: "run_id", agent: "agent_id", daemon: "daemon_id", conversation: "conversation_id" };

/** Rows per INSERT: 8 parameters each, under PostgreSQL's 65,535. */
const CHUNK = 4000;

type PgRow = { id: string | number; ts: string | number; type: string; run_id: string | null; agent_id: string | null; daemon_id: string | null; conversation_id: string | null; payload: string };

/**
 * Events on PostgreSQL, shared by every process on the database. Gap-free for readers: an append
 * takes `pg_advisory_xact_lock` and numbers its rows after the newest stored id inside that
 * transaction, so batches commit one at a time in id order, and a reader that trusts
 * `id > cursor` never skips one that commits later with a smaller id. Each commit sends one
 * NOTIFY (the batch's newest id) inside its transaction: delivered only if it commits, once per
 * batch. Other processes `watch` that channel and read the store after their cursor.
 */
export class PgEventStore implements EventStorage {
  /** Appends run through drizzle's transactions: the domains' row writes share them (and their savepoints). */
  private readonly db: PostgresJsDatabase<typeof pgSchema>;

  constructor(private readonly sql: Sql) {
    this.db = drizzle(sql, { schema: pgSchema });
  }

  async maxId(): Promise<number> {
    const [row] = await this.sql<Array<{ id: string | null }>>`SELECT max(id)::text AS id FROM events`;
    return Number(row?.id ?? 0);
  }

  /**
   * One transaction under the append lock: the rows' writes first, each in a savepoint of its own
   * (one that throws drops its row only), then the rows that held, numbered after the newest
   * stored id, then one NOTIFY.
   */
  async append(rows: readonly EventRow[], writes?: ReadonlyArray<RowWrite | undefined>): Promise<Array<number | Error>> {
    if (rows.length === 0) return [];
    const failed = new Map<EventRow, Error>();
    const ids = new Map<EventRow, number>();
    await this.db.transaction(async (tx) => {
      failed.clear();
      ids.clear();
      await tx.execute(q`SELECT pg_advisory_xact_lock(${EVENTS_APPEND_LOCK})`);
      if (writes?.some((w) => w !== undefined)) {
        for (let i = 0; i < rows.length; i++) {
          const write = writes[i];
          if (!write) continue;
          try {
            // a savepoint: a write that throws takes back only what it wrote
            await tx.transaction(async (savepoint) => {
              await write(savepoint as unknown as TxDb);
            });
          } catch (err) {
            failed.set(rows[i]!, err instanceof Error ? err : new Error(String(err)));
          }
        }
      }
      const kept = rows.filter((r) => !failed.has(r));
      if (kept.length === 0) return;
      const [top] = await tx.select({ id: q<string | null>`max(${pgSchema.events.id})::text` }).from(pgSchema.events);
      let next = Number(top?.id ?? 0) + 1;
      for (const row of kept) ids.set(row, next++);
      for (let i = 0; i < kept.length; i += CHUNK) {
        await tx.insert(pgSchema.events).values(kept.slice(i, i + CHUNK).map((r) => toPgRow(r, ids.get(r)!)));
      }
      await tx.execute(q`SELECT pg_notify(${EVENTS_CHANNEL}, ${String(next - 1)})`);
    });
    return rows.map((r) => {
      const error = failed.get(r);
      if (error) return error;
      r.id = ids.get(r)!;
      return r.id;
    });
  }

  async readAfter(afterId: number, scope: ScopeFilter | undefined, limit: number): Promise<BusEvent[]> {
    const rows = scope
      ? await this.sql<PgRow[]>`SELECT id, ts, type, run_id, agent_id, daemon_id, conversation_id, payload FROM events WHERE ${this.sql(COLUMN[scope.kind])} = ${scope.id} AND id > ${afterId} ORDER BY id LIMIT ${limit}`
      : await this.sql<PgRow[]>`SELECT id, ts, type, run_id, agent_id, daemon_id, conversation_id, payload FROM events WHERE id > ${afterId} ORDER BY id LIMIT ${limit}`;
    return rows.map(toEvent);
  }

  async count(afterId = 0, scope?: ScopeFilter): Promise<number> {
    const [row] = scope
      ? await this.sql<Array<{ n: string }>>`SELECT count(*)::text AS n FROM events WHERE ${this.sql(COLUMN[scope.kind])} = ${scope.id} AND id > ${afterId}`
      : await this.sql<Array<{ n: string }>>`SELECT count(*)::text AS n FROM events WHERE id > ${afterId}`;
    return Number(row?.n ?? 0);
  }

  /**
   * Commits of every process (this one's too), as NOTIFY announces them; on each (re)connect of
   * the listening connection too (with -1: what was announced meanwhile is unknown), so a reader
   * catches up after a lost connection.
   */
  async watch(onCommit: (lastId: number) => void): Promise<() => Promise<void>> {
    const { unlisten } = await this.sql.listen(
      EVENTS_CHANNEL,
      (payload) => onCommit(Number(payload)),
      () => onCommit(-1),
    );
    return unlisten;
  }
}

function toPgRow(r: EventRow, id: number) {
  const s: EventScope = r.scope;
  return { id, ts: r.ts, type: r.type, runId: s.runId ?? null, agentId: s.agentId ?? null, daemonId: s.daemonId ?? null, conversationId: s.conversationId ?? null, payload: r.payloadJson };
}

function toEvent(r: PgRow): BusEvent {
  const scope: EventScope = {};
  if (r.run_id !== null) scope.runId = r.run_id;
  if (r.agent_id !== null) scope.agentId = r.agent_id;
  if (r.daemon_id !== null) scope.daemonId = r.daemon_id;
  if (r.conversation_id !== null) scope.conversationId = r.conversation_id;
  return { id: Number(r.id), ts: new Date(Number(r.ts)).toISOString(), type: currentEventType(r.type), scope, payload: JSON.parse(r.payload) } as BusEvent;
}

