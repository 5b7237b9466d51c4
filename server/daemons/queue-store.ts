import type { Db } from "../db/client";

export type QueueRow = { daemonId: string; seq: number; enqueuedAt: string; payloadJson: string };
export type StoredQueueEntry = { seq: number; enqueuedAt: string; payload: unknown; state: "pending" | "inflight" };

type Waiting = { row: QueueRow; resolve: () => void; reject: (err: Error) => void };

/**
 * The `daemon_queue` table. `insert` group-commits: every trigger of one event-loop turn goes into
 * one transaction, and each promise resolves only once that transaction is committed.
 */
export class DaemonQueueStore {
  private waiting: Waiting[] = [];
  private timer: NodeJS.Immediate | undefined;
  private readonly sqlite: Db["$client"];
  private readonly stmts;

  constructor(db: Db) {
    this.sqlite = db.$client;
    this.stmts = {
      insert: this.sqlite.prepare("INSERT INTO daemon_queue (daemon_id, seq, enqueued_at, payload, state) VALUES (?, ?, ?, ?, 'pending')"),
      setState: this.sqlite.prepare("UPDATE daemon_queue SET state = ? WHERE daemon_id = ? AND seq = ?"),
      open: this.sqlite.prepare("SELECT seq, enqueued_at AS enqueuedAt, payload, state FROM daemon_queue WHERE daemon_id = ? AND state != 'done' ORDER BY seq"),
      done: this.sqlite.prepare("SELECT seq FROM daemon_queue WHERE daemon_id = ? AND state = 'done'"),
      maxSeq: this.sqlite.prepare("SELECT MAX(seq) AS seq FROM daemon_queue WHERE daemon_id = ?"),
      prune: this.sqlite.prepare("DELETE FROM daemon_queue WHERE daemon_id = ? AND state = 'done' AND seq < ?"),
      requeue: this.sqlite.prepare("UPDATE daemon_queue SET state = 'pending' WHERE daemon_id = ? AND state = 'inflight'"),
      remove: this.sqlite.prepare("DELETE FROM daemon_queue WHERE daemon_id = ?"),
      restore: this.sqlite.prepare("INSERT OR IGNORE INTO daemon_queue (daemon_id, seq, enqueued_at, payload, state) VALUES (?, ?, ?, ?, 'pending')"),
    };
  }

  insert(row: QueueRow): Promise<void> {
    return new Promise<void>((resolve, reject) => {
      this.waiting.push({ row, resolve, reject });
      this.timer ??= setImmediate(() => this.flush());
    });
  }

  /** Commit every waiting insert now, in one transaction. */
  flush(): void {
    if (this.timer) clearImmediate(this.timer);
    this.timer = undefined;
    const batch = this.waiting;
    if (batch.length === 0) return;
    this.waiting = [];
    try {
      this.sqlite.transaction(() => {
        for (const { row } of batch) this.stmts.insert.run(row.daemonId, row.seq, row.enqueuedAt, row.payloadJson);
      })();
    } catch (err) {
      const error = err instanceof Error ? err : new Error(String(err));
      for (const w of batch) w.reject(error);
      return;
    }
    for (const w of batch) w.resolve();
  }

  setState(daemonId: string, seq: number, state: "pending" | "inflight" | "done"): void {
    this.stmts.setState.run(state, daemonId, seq);
  }

  /** Pending and in-flight entries, oldest first. */
  open(daemonId: string): StoredQueueEntry[] {
    const rows = this.stmts.open.all(daemonId) as Array<{ seq: number; enqueuedAt: string; payload: string; state: "pending" | "inflight" }>;
    return rows.map((r) => ({ seq: r.seq, enqueuedAt: r.enqueuedAt, payload: JSON.parse(r.payload) as unknown, state: r.state }));
  }

  doneSeqs(daemonId: string): Set<number> {
    return new Set((this.stmts.done.all(daemonId) as Array<{ seq: number }>).map((r) => r.seq));
  }

  maxSeq(daemonId: string): number | undefined {
    const row = this.stmts.maxSeq.get(daemonId) as { seq: number | null } | undefined;
    return row?.seq ?? undefined;
  }

  requeueInflight(daemonId: string): void {
    this.stmts.requeue.run(daemonId);
  }

  /** Delete the done entries below `belowSeq` (those the root files no longer list). */
  pruneDone(daemonId: string, belowSeq: number): void {
    if (!this.sqlite.open) return;
    this.stmts.prune.run(daemonId, belowSeq);
  }

  /** Make sure entries restored from a root's meta file are in the table (a root moved between servers). */
  restore(daemonId: string, entries: Array<{ seq: number; enqueued_at: string; payload: unknown }>): void {
    this.sqlite.transaction(() => {
      for (const e of entries) this.stmts.restore.run(daemonId, e.seq, e.enqueued_at, JSON.stringify(e.payload ?? null));
    })();
  }

  remove(daemonId: string): void {
    this.stmts.remove.run(daemonId);
  }
}
