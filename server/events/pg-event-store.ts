import { sql as q } from "drizzle-orm";
import { drizzle, type PostgresJsDatabase } from "drizzle-orm/postgres-js";
import type { Sql, TransactionSql } from "postgres";
import { currentEventType, type BusEvent, type EventScope, type ScopeFilter, type ScopeKind } from "../../shared/events";
import * as pgSchema from "../db/pg/schema";
import type { RowWrite, TxDb } from "../db/store";
import { untilConnectionLoss } from "../db/pg/connection-loss";
import { leaseLost, type EventFence, type EventRow, type EventStorage } from "./event-store";

/** Drizzle's transaction on postgres.js, as `append` runs the row writes in it. */
type PgTx = Parameters<Parameters<PostgresJsDatabase<typeof pgSchema>["transaction"]>[0]>[0];

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
  /** Rows refused since start because their fence no longer held, by lease (`kind:id`). */
  readonly refused = new Map<string, number>();

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
   * stored id, then one NOTIFY. Without writes (the hot path) the transaction is postgres.js's
   * own: drizzle's query builder would spend more time building a 4,000-row INSERT than
   * PostgreSQL spends running it.
   */
  async append(rows: readonly EventRow[], writes?: ReadonlyArray<RowWrite | undefined>): Promise<Array<number | Error>> {
    if (rows.length === 0) return [];
    const fenced = rows.some((r) => r.fence !== undefined);
    if (!writes?.some((w) => w !== undefined)) {
      let failed: Map<EventRow, Error> | undefined;
      await this.sql.begin((tx) =>
        untilConnectionLoss(
          (async () => {
            await tx`SELECT pg_advisory_xact_lock(${EVENTS_APPEND_LOCK})`;
            failed = fenced ? await this.unfenced(tx, rows) : undefined;
            const kept = failed?.size ? rows.filter((r) => !failed!.has(r)) : rows;
            if (kept.length > 0) await insertNumbered(tx, kept);
          })(),
        ),
      );
      return rows.map((r) => failed?.get(r) ?? r.id);
    }
    const failed = new Map<EventRow, Error>();
    await this.db.transaction((tx) => untilConnectionLoss(this.appendWithWrites(tx, rows, writes, fenced, failed)));
    return rows.map((r) => failed.get(r) ?? r.id);
  }

  /** The append with row writes, in drizzle's transaction `tx` (its savepoints for the writes). */
  private async appendWithWrites(tx: PgTx, rows: readonly EventRow[], writes: ReadonlyArray<RowWrite | undefined>, fenced: boolean, failed: Map<EventRow, Error>): Promise<void> {
    failed.clear();
    await tx.execute(q`SELECT pg_advisory_xact_lock(${EVENTS_APPEND_LOCK})`);
    if (fenced) for (const [row, err] of await this.unfenced(rawClient(tx), rows)) failed.set(row, err);
    for (let i = 0; i < rows.length; i++) {
      const write = writes[i];
      if (!write || failed.has(rows[i]!)) continue;
      try {
        // a savepoint: a write that throws takes back only what it wrote
        await tx.transaction(async (savepoint) => untilConnectionLoss(Promise.resolve(write(savepoint as unknown as TxDb))));
      } catch (err) {
        failed.set(rows[i]!, err instanceof Error ? err : new Error(String(err)));
      }
    }
    const kept = rows.filter((r) => !failed.has(r));
    if (kept.length > 0) await insertNumbered(rawClient(tx), kept);
  }

  /**
   * Under the append lock: the rows whose fence no longer holds (their lease is another server's,
   * at another epoch, or gone), each with its LEASE_LOST. A lease is taken over only under the same
   * lock (holdAppends), so what this check passes commits before any takeover.
   */
  private async unfenced(tx: TransactionSql, rows: readonly EventRow[]): Promise<Map<EventRow, Error>> {
    const leases = new Map<string, EventFence>();
    for (const r of rows) if (r.fence) leases.set(`${r.fence.kind}:${r.fence.id}`, r.fence);
    const keys = [...leases.values()];
    const held = await tx<Array<{ kind: string; entity_id: string; server_id: string; epoch: number }>>`
      SELECT kind, entity_id, server_id, epoch FROM leases
      WHERE (kind, entity_id) IN (SELECT * FROM unnest(${keys.map((f) => f.kind)}::text[], ${keys.map((f) => f.id)}::text[]))`;
    const now = new Map(held.map((h) => [`${h.kind}:${h.entity_id}`, h]));
    const failed = new Map<EventRow, Error>();
    for (const r of rows) {
      const f = r.fence;
      if (!f) continue;
      const k = `${f.kind}:${f.id}`;
      const lease = now.get(k);
      if (lease && lease.server_id === f.serverId && Number(lease.epoch) === f.epoch) continue;
      failed.set(r, leaseLost(f.kind, f.id, "its event"));
      this.refused.set(k, (this.refused.get(k) ?? 0) + 1);
    }
    return failed;
  }

  refusedFor(kind: string, id: string): number {
    return this.refused.get(`${kind}:${id}`) ?? 0;
  }

  async holdAppends(tx: TxDb): Promise<void> {
    await (tx as unknown as { execute(query: ReturnType<typeof q>): Promise<unknown> }).execute(q`SELECT pg_advisory_xact_lock(${EVENTS_APPEND_LOCK})`);
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

/** The columns of a row as postgres.js inserts them (`tx(rows, ...PG_COLUMNS)`). */
const PG_COLUMNS = ["id", "ts", "type", "run_id", "agent_id", "daemon_id", "conversation_id", "payload"] as const;

/**
 * Inside a transaction holding the append lock: number `rows` after the newest stored id (setting
 * each row's `id`), insert them (CHUNK rows a statement) and announce the batch's newest id.
 */
async function insertNumbered(tx: TransactionSql, rows: readonly EventRow[]): Promise<void> {
  const [top] = await tx<Array<{ id: string | null }>>`SELECT max(id)::text AS id FROM events`;
  let next = Number(top?.id ?? 0) + 1;
  const values = rows.map((r) => {
    const s: EventScope = r.scope;
    return { id: next++, ts: r.ts, type: r.type, run_id: s.runId ?? null, agent_id: s.agentId ?? null, daemon_id: s.daemonId ?? null, conversation_id: s.conversationId ?? null, payload: r.payloadJson };
  });
  for (let i = 0; i < values.length; i += CHUNK) await tx`INSERT INTO events ${tx(values.slice(i, i + CHUNK), ...PG_COLUMNS)}`;
  await tx`SELECT pg_notify(${EVENTS_CHANNEL}, ${String(next - 1)})`;
  // ids only once every statement held: a failed transaction leaves the rows unnumbered
  values.forEach((v, i) => (rows[i]!.id = v.id));
}

/** The postgres.js transaction under a drizzle one (drizzle's postgres-js session keeps it as `client`). */
function rawClient(tx: unknown): TransactionSql {
  const client = (tx as { session?: { client?: TransactionSql } }).session?.client;
  if (typeof client !== "function") throw new Error("drizzle's transaction no longer exposes its postgres.js client");
  return client;
}

function toEvent(r: PgRow): BusEvent {
  const scope: EventScope = {};
  if (r.run_id !== null) scope.runId = r.run_id;
  if (r.agent_id !== null) scope.agentId = r.agent_id;
  if (r.daemon_id !== null) scope.daemonId = r.daemon_id;
  if (r.conversation_id !== null) scope.conversationId = r.conversation_id;
  return { id: Number(r.id), ts: new Date(Number(r.ts)).toISOString(), type: currentEventType(r.type), scope, payload: JSON.parse(r.payload) } as BusEvent;
}

