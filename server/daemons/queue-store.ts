import type { Statement } from "better-sqlite3";
import type { PgStore } from "../db/pg/pg-store";
import type { SqliteStore } from "../db/sqlite-store";
import type { Store } from "../db/store";
import type { WriteGate } from "../db/write-gate";
import type { MaybePromise } from "../events/event-store";
import { PgDaemonQueueStore } from "./pg-queue-store";

export type QueueRow = { daemonId: string; seq: number; enqueuedAt: string; payloadJson: string };
export type QueueState = "pending" | "inflight" | "done";
export type StoredQueueEntry = { seq: number; enqueuedAt: string; payload: unknown; state: "pending" | "inflight" };
/** An entry a root's meta file lists (its own layout). */
export type MetaQueueEntry = { seq: number; enqueued_at: string; payload: unknown };
/** The queue as a resume finds it: its open entries, oldest first, and the highest seq ever queued. */
export type RecoveredQueue = { open: StoredQueueEntry[]; maxSeq: number | undefined };

/**
 * The durable trigger queue (`daemon_queue`): on this SQLite file (`SqliteDaemonQueueStore`, raw
 * prepared statements, synchronous when nothing holds the connection) or on PostgreSQL
 * (`PgDaemonQueueStore`). Results may be plain values: the SQLite hot path never waits for a promise.
 */
export interface DaemonQueueStorage {
  /**
   * Queue a trigger's row. Group commit: every insert of one event-loop turn goes into one
   * transaction, batches commit one after another in the order they were made, and each promise
   * resolves only once its row is committed (rejects when that transaction failed).
   */
  insert(row: QueueRow): Promise<void>;
  /** Commit every waiting insert now; settles once they (and every batch before them) are committed. */
  flush(): MaybePromise<void>;
  /**
   * Take entry `seq` in flight, only if it is the daemon's next one: pending, with no older entry
   * pending or in flight (FIFO), and not being taken by anyone else (PostgreSQL: `FOR UPDATE SKIP
   * LOCKED`). False when it is not: the caller leaves it queued.
   */
  claim(daemonId: string, seq: number): MaybePromise<boolean>;
  setState(daemonId: string, seq: number, state: QueueState): MaybePromise<void>;
  /** Pending and in-flight entries, oldest first. */
  open(daemonId: string): MaybePromise<StoredQueueEntry[]>;
  /**
   * At resume, in one transaction: the entries a root's meta file lists are made sure of (a root
   * moved between servers; an entry the table holds, done ones included, is kept as it is), in-flight
   * entries go back to pending (at-least-once), then the open entries and the highest seq are read.
   */
  recover(daemonId: string, entries: readonly MetaQueueEntry[]): MaybePromise<RecoveredQueue>;
  /** Delete the done entries below `belowSeq` (those the root files no longer list). */
  pruneDone(daemonId: string, belowSeq: number): MaybePromise<void>;
}

/** The queue on the store's database. */
export function createDaemonQueueStorage(store: Store): DaemonQueueStorage {
  if (store.dialect === "postgres") return new PgDaemonQueueStore((store as PgStore).db.$client);
  return new SqliteDaemonQueueStore(store as SqliteStore);
}

type Waiting = { row: QueueRow; resolve: () => void; reject: (err: Error) => void };
type OpenRow = { seq: number; enqueuedAt: string; payload: string; state: "pending" | "inflight" };

const toEntry = (r: OpenRow): StoredQueueEntry => ({ seq: r.seq, enqueuedAt: r.enqueuedAt, payload: JSON.parse(r.payload) as unknown, state: r.state });

/**
 * `daemon_queue` on SQLite. Every write goes through the connection's write gate: it runs at once
 * (synchronously) when no transaction holds the connection, else after that transaction, so it
 * never lands inside another domain's transaction (and is never rolled back with it).
 */
export class SqliteDaemonQueueStore implements DaemonQueueStorage {
  private waiting: Waiting[] = [];
  private timer: NodeJS.Immediate | undefined;
  /** A commit waiting for the gate: it takes every insert waiting when it runs. */
  private deferred: Promise<void> | undefined;
  private readonly sqlite: SqliteStore["db"]["$client"];
  private readonly gate: WriteGate;
  private readonly stmts: Record<"insert" | "claim" | "setState" | "open" | "maxSeq" | "prune" | "requeue" | "restore", Statement>;

  constructor(store: SqliteStore) {
    this.sqlite = store.db.$client;
    this.gate = store.gate;
    const prepare = (sql: string) => this.sqlite.prepare(sql);
    this.stmts = {
      insert: prepare("INSERT INTO daemon_queue (daemon_id, seq, enqueued_at, payload, state) VALUES (?, ?, ?, ?, 'pending')"),
      claim: prepare(
        "UPDATE daemon_queue SET state = 'inflight' WHERE daemon_id = ? AND seq = ? AND state = 'pending' " +
          "AND NOT EXISTS (SELECT 1 FROM daemon_queue AS older WHERE older.daemon_id = ? AND older.state IN ('pending', 'inflight') AND older.seq < ?)",
      ),
      setState: prepare("UPDATE daemon_queue SET state = ? WHERE daemon_id = ? AND seq = ?"),
      open: prepare("SELECT seq, enqueued_at AS enqueuedAt, payload, state FROM daemon_queue WHERE daemon_id = ? AND state != 'done' ORDER BY seq"),
      maxSeq: prepare("SELECT MAX(seq) AS seq FROM daemon_queue WHERE daemon_id = ?"),
      prune: prepare("DELETE FROM daemon_queue WHERE daemon_id = ? AND state = 'done' AND seq < ?"),
      requeue: prepare("UPDATE daemon_queue SET state = 'pending' WHERE daemon_id = ? AND state = 'inflight'"),
      restore: prepare("INSERT OR IGNORE INTO daemon_queue (daemon_id, seq, enqueued_at, payload, state) VALUES (?, ?, ?, ?, 'pending')"),
    };
  }

  insert(row: QueueRow): Promise<void> {
    return new Promise<void>((resolve, reject) => {
      this.waiting.push({ row, resolve, reject });
      this.timer ??= setImmediate(() => void this.flush());
    });
  }

  /**
   * Commit every waiting insert now, in one transaction: synchronously when nothing holds the
   * connection; else once the transaction holding it has ended (a commit already waiting for
   * that takes these too, so batches never commit out of order).
   */
  flush(): MaybePromise<void> {
    if (this.timer) clearImmediate(this.timer);
    this.timer = undefined;
    if (this.deferred) return this.deferred;
    if (this.waiting.length === 0) return;
    if (!this.gate.busy) return this.commit();
    const deferred = this.gate
      .exclusive(async () => {
        this.deferred = undefined;
        this.commit();
      })
      .catch((err: unknown) => {
        this.deferred = undefined;
        this.fail(this.take(), err);
      });
    this.deferred = deferred;
    return deferred;
  }

  private take(): Waiting[] {
    const batch = this.waiting;
    this.waiting = [];
    return batch;
  }

  private commit(): void {
    const batch = this.take();
    if (batch.length === 0) return;
    try {
      this.sqlite.transaction(() => {
        for (const { row } of batch) this.stmts.insert.run(row.daemonId, row.seq, row.enqueuedAt, row.payloadJson);
      })();
    } catch (err) {
      this.fail(batch, err);
      return;
    }
    for (const w of batch) w.resolve();
  }

  private fail(batch: Waiting[], err: unknown): void {
    const error = err instanceof Error ? err : new Error(String(err));
    for (const w of batch) w.reject(error);
  }

  claim(daemonId: string, seq: number): MaybePromise<boolean> {
    return this.gate.run(() => this.stmts.claim.run(daemonId, seq, daemonId, seq).changes === 1);
  }

  setState(daemonId: string, seq: number, state: QueueState): MaybePromise<void> {
    return this.gate.run(() => void this.stmts.setState.run(state, daemonId, seq));
  }

  open(daemonId: string): StoredQueueEntry[] {
    return (this.stmts.open.all(daemonId) as OpenRow[]).map(toEntry);
  }

  recover(daemonId: string, entries: readonly MetaQueueEntry[]): MaybePromise<RecoveredQueue> {
    return this.gate.run(() =>
      this.sqlite.transaction(() => {
        for (const e of entries) this.stmts.restore.run(daemonId, e.seq, e.enqueued_at, JSON.stringify(e.payload ?? null));
        this.stmts.requeue.run(daemonId);
        const max = this.stmts.maxSeq.get(daemonId) as { seq: number | null } | undefined;
        return { open: this.open(daemonId), maxSeq: max?.seq ?? undefined };
      })(),
    );
  }

  pruneDone(daemonId: string, belowSeq: number): MaybePromise<void> {
    if (!this.sqlite.open) return;
    return this.gate.run(() => {
      if (this.sqlite.open) this.stmts.prune.run(daemonId, belowSeq);
    });
  }
}
