import type { Sql, TransactionSql } from "postgres";
import { untilConnectionLoss } from "../db/pg/connection-loss";
import type { DaemonQueueStorage, MetaQueueEntry, QueueRow, QueueState, RecoveredQueue, StoredQueueEntry } from "./queue-store";

/** Rows per INSERT: 5 parameters each, under PostgreSQL's 65,535. */
const CHUNK = 10_000;
const COLUMNS = ["daemon_id", "seq", "enqueued_at", "payload", "state"] as const;

type Waiting = { row: QueueRow; resolve: () => void; reject: (err: Error) => void };
type PgQueueRow = { daemon_id: string; seq: number; enqueued_at: string; payload: string; state: "pending" };
type OpenRow = { seq: number; enqueued_at: string; payload: string; state: "pending" | "inflight" };

const toEntry = (r: OpenRow): StoredQueueEntry => ({ seq: r.seq, enqueuedAt: r.enqueued_at, payload: JSON.parse(r.payload) as unknown, state: r.state });

/**
 * `daemon_queue` on PostgreSQL (the twin of SqliteDaemonQueueStore), on the postgres.js client.
 * The group commit is one multi-row INSERT per event-loop turn, one batch at a time: inserts that
 * come while a batch is on its way go into the next, so acknowledgements (and the order in which
 * the daemon accepts its triggers) follow the seqs. A daemon's next entry is claimed with
 * `FOR UPDATE SKIP LOCKED`, so servers sharing the database never take the same entry, nor one
 * behind an entry still open.
 */
export class PgDaemonQueueStore implements DaemonQueueStorage {
  private waiting: Waiting[] = [];
  private timer: NodeJS.Immediate | undefined;
  /** The batch on its way (commit never rejects: a failed batch rejects its inserts). */
  private committing: Promise<void> | undefined;

  constructor(private readonly sql: Sql) {}

  insert(row: QueueRow): Promise<void> {
    return new Promise<void>((resolve, reject) => {
      this.waiting.push({ row, resolve, reject });
      this.timer ??= setImmediate(() => void this.flush());
    });
  }

  /** Commit every waiting insert; resolves once they are committed (after the batch on its way, if any). */
  flush(): Promise<void> {
    if (this.timer) clearImmediate(this.timer);
    this.timer = undefined;
    // one batch at a time: what waits now goes into the next one, once the batch on its way is committed
    if (this.committing) return this.waiting.length > 0 ? this.committing.then(() => this.flush()) : this.committing;
    if (this.waiting.length === 0) return Promise.resolve();
    const batch = this.waiting;
    this.waiting = [];
    const committing = this.commit(batch).finally(() => {
      this.committing = undefined;
    });
    this.committing = committing;
    return committing;
  }

  private async commit(batch: Waiting[]): Promise<void> {
    const rows: PgQueueRow[] = batch.map(({ row }) => ({ daemon_id: row.daemonId, seq: row.seq, enqueued_at: row.enqueuedAt, payload: row.payloadJson, state: "pending" }));
    try {
      if (rows.length <= CHUNK) await this.sql`INSERT INTO daemon_queue ${this.sql(rows, ...COLUMNS)}`;
      else {
        await this.sql.begin((tx) =>
          untilConnectionLoss(
            (async () => {
              for (let i = 0; i < rows.length; i += CHUNK) await tx`INSERT INTO daemon_queue ${tx(rows.slice(i, i + CHUNK), ...COLUMNS)}`;
            })(),
          ),
        );
      }
    } catch (err) {
      const error = err instanceof Error ? err : new Error(String(err));
      for (const w of batch) w.reject(error);
      return;
    }
    for (const w of batch) w.resolve();
  }

  async claim(daemonId: string, seq: number): Promise<boolean> {
    const rows = await this.sql`
      WITH next AS (
        SELECT daemon_id, seq FROM daemon_queue
        WHERE daemon_id = ${daemonId} AND seq = ${seq} AND state = 'pending'
          AND NOT EXISTS (
            SELECT 1 FROM daemon_queue AS older
            WHERE older.daemon_id = ${daemonId} AND older.state IN ('pending', 'inflight') AND older.seq < ${seq}
          )
        FOR UPDATE SKIP LOCKED
      )
      UPDATE daemon_queue AS q SET state = 'inflight' FROM next
      WHERE q.daemon_id = next.daemon_id AND q.seq = next.seq
      RETURNING q.seq`;
    return rows.length === 1;
  }

  async setState(daemonId: string, seq: number, state: QueueState): Promise<void> {
    await this.sql`UPDATE daemon_queue SET state = ${state} WHERE daemon_id = ${daemonId} AND seq = ${seq}`;
  }

  async open(daemonId: string): Promise<StoredQueueEntry[]> {
    const rows = await this.sql<OpenRow[]>`SELECT seq, enqueued_at, payload, state FROM daemon_queue WHERE daemon_id = ${daemonId} AND state <> 'done' ORDER BY seq`;
    return rows.map(toEntry);
  }

  async recover(daemonId: string, entries: readonly MetaQueueEntry[]): Promise<RecoveredQueue> {
    const rows: PgQueueRow[] = entries.map((e) => ({ daemon_id: daemonId, seq: e.seq, enqueued_at: e.enqueued_at, payload: JSON.stringify(e.payload ?? null), state: "pending" }));
    return this.sql.begin((tx) => untilConnectionLoss(this.recoverIn(tx, daemonId, rows))) as Promise<RecoveredQueue>;
  }

  private async recoverIn(tx: TransactionSql, daemonId: string, rows: PgQueueRow[]): Promise<RecoveredQueue> {
    for (let i = 0; i < rows.length; i += CHUNK) {
      await tx`INSERT INTO daemon_queue ${tx(rows.slice(i, i + CHUNK), ...COLUMNS)} ON CONFLICT (daemon_id, seq) DO NOTHING`;
    }
    await tx`UPDATE daemon_queue SET state = 'pending' WHERE daemon_id = ${daemonId} AND state = 'inflight'`;
    const open = await tx<OpenRow[]>`SELECT seq, enqueued_at, payload, state FROM daemon_queue WHERE daemon_id = ${daemonId} AND state <> 'done' ORDER BY seq`;
    const [max] = await tx<Array<{ seq: number | null }>>`SELECT max(seq) AS seq FROM daemon_queue WHERE daemon_id = ${daemonId}`;
    return { open: open.map(toEntry), maxSeq: max?.seq ?? undefined };
  }

  async pruneDone(daemonId: string, belowSeq: number): Promise<void> {
    await this.sql`DELETE FROM daemon_queue WHERE daemon_id = ${daemonId} AND state = 'done' AND seq < ${belowSeq}`;
  }
}
