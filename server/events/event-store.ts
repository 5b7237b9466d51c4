import type { Statement, Transaction } from "better-sqlite3";
import { currentEventType, type BusEvent, type EventScope, type ScopeFilter, type ScopeKind } from "../../shared/events";
import type { Db } from "../db/client";
import type { RowWrite, TxDb } from "../db/store";
import { WriteGate } from "../db/write-gate";
import { DomainError } from "../errors";

/** One row as the bus hands it to the store: payload already serialized; `id` is set by the store's `append`. */
export type EventRow = {
  id: number;
  ts: number;
  type: string;
  scope: EventScope;
  payloadJson: string;
  /** Stored only while the publisher still owns what it writes for (see EventFence). */
  fence?: EventFence;
};

/**
 * An owner's claim on what it publishes for: the lease (kind and id) it holds, at the epoch it
 * took, as this server. A store shared by several servers stores the row only if that lease is
 * still this server's at that epoch when the batch commits; otherwise the row is refused
 * (LEASE_LOST) and nothing of it is stored or delivered. A store of one server ignores it.
 */
export type EventFence = { kind: string; id: string; epoch: number; serverId: string };

/** The refusal of what a server writes for a lease it no longer holds (`what`: its event, its lines, its write). */
export function leaseLost(kind: string, id: string, what: string): DomainError<"LEASE_LOST"> {
  return new DomainError("LEASE_LOST", `This server no longer owns ${kind} ${id}: another server took it over, so ${what} is refused`, { kind: "CONFLICT", details: { kind, id } });
}

export type MaybePromise<T> = T | Promise<T>;

/**
 * Where the bus keeps events: this SQLite file (`EventStore`, synchronous) or PostgreSQL
 * (`PgEventStore`, several processes). Results may be plain values: the SQLite hot path never
 * waits for a promise.
 */
export interface EventStorage {
  /** The newest committed id. */
  maxId(): MaybePromise<number>;
  /**
   * Store the rows in one transaction, in order, with ids above every id committed before (ids
   * are handed out in commit order: a reader trusting `id > cursor` never skips one). A row's
   * write (`writes[i]`, same transaction, a savepoint of its own, given the transaction's query
   * builder) that throws drops only that row. Per row: its id, or the error of its write. Throws
   * when nothing was stored.
   */
  append(rows: readonly EventRow[], writes?: ReadonlyArray<RowWrite | undefined>): MaybePromise<Array<number | Error>>;
  /** Events with id > afterId, oldest first, optionally of one scope. */
  readAfter(afterId: number, scope: ScopeFilter | undefined, limit: number): MaybePromise<BusEvent[]>;
  count(afterId?: number, scope?: ScopeFilter): MaybePromise<number>;
  /** Commits of other processes on the same store, as they happen: the newest id each committed. */
  watch?(onCommit: (lastId: number) => void): Promise<() => Promise<void>>;
  /**
   * Inside `tx` (a lease taken or taken over, on a store several servers share): wait for the
   * append under way and keep new ones out until `tx` ends, so a fenced row checked before the
   * take commits before it, and one checked after it sees the new epoch.
   */
  holdAppends?(tx: TxDb): Promise<void>;
  /** How many events fenced by this lease were refused since start (see EventFence). */
  refusedFor?(kind: string, id: string): number;
}

type RawRow = {
  id: number;
  ts: number;
  type: string;
  run_id: string | null;
  agent_id: string | null;
  daemon_id: string | null;
  conversation_id: string | null;
  payload: string;
};

const COLUMN: Record<ScopeKind, string> = {
  run: "run_id",
  agent: "agent_id",
  daemon: "daemon_id",
  conversation: "conversation_id",
};

/** Rows per multi-row INSERT (8 parameters each). */
const CHUNK = 64;

const SELECT = "SELECT id, ts, type, run_id, agent_id, daemon_id, conversation_id, payload FROM events";

/**
 * Persistence of bus events. Raw prepared statements on the hot path (the table itself is defined
 * with drizzle in events.sql.ts and created by the migrations).
 */
export class EventStore implements EventStorage {
  /** The next id to hand out (this process's view; renumbered when another process on the file took it). */
  private nextId: number | undefined;
  private readonly insertStmt: Statement;
  private readonly insertBatch: Transaction<(rows: readonly EventRow[]) => void>;
  private readonly readAll: Statement;
  private readonly readScoped: Record<ScopeKind, Statement>;
  private readonly countAll: Statement;
  private readonly countScoped: Record<ScopeKind, Statement>;

  /**
   * `gate`: the connection's write gate, shared with the other writers on it (the store's); a
   * batch with row writes holds it while they run.
   */
  constructor(
    private readonly db: Db,
    private readonly gate = new WriteGate(),
  ) {
    const sqlite = db.$client;
    const insert = (n: number) =>
      sqlite.prepare(`INSERT INTO events (id, ts, type, run_id, agent_id, daemon_id, conversation_id, payload) VALUES ${Array(n).fill("(?, ?, ?, ?, ?, ?, ?, ?)").join(", ")}`);
    this.insertStmt = insert(1);
    // Multi-row statements: one call into SQLite per CHUNK rows instead of one per row.
    const chunkStmt = insert(CHUNK);
    const params: unknown[] = new Array(CHUNK * 8);
    const fill = (target: unknown[], at: number, r: EventRow) => {
      const s = r.scope;
      target[at] = r.id;
      target[at + 1] = r.ts;
      target[at + 2] = r.type;
      target[at + 3] = s.runId ?? null;
      target[at + 4] = s.agentId ?? null;
      target[at + 5] = s.daemonId ?? null;
      target[at + 6] = s.conversationId ?? null;
      target[at + 7] = r.payloadJson;
    };
    const one: unknown[] = new Array(8);
    this.insertBatch = sqlite.transaction((rows: readonly EventRow[]) => {
      let i = 0;
      for (; i + CHUNK <= rows.length; i += CHUNK) {
        for (let k = 0; k < CHUNK; k++) fill(params, k * 8, rows[i + k]!);
        chunkStmt.run(params);
      }
      for (; i < rows.length; i++) {
        fill(one, 0, rows[i]!);
        this.insertStmt.run(one);
      }
    });
    this.readAll = sqlite.prepare(`${SELECT} WHERE id > ? ORDER BY id LIMIT ?`);
    this.countAll = sqlite.prepare("SELECT count(*) AS n FROM events WHERE id > ?");
    const scoped = (kind: ScopeKind) => sqlite.prepare(`${SELECT} WHERE ${COLUMN[kind]} = ? AND id > ? ORDER BY id LIMIT ?`);
    const counted = (kind: ScopeKind) => sqlite.prepare(`SELECT count(*) AS n FROM events WHERE ${COLUMN[kind]} = ? AND id > ?`);
    this.readScoped = { run: scoped("run"), agent: scoped("agent"), daemon: scoped("daemon"), conversation: scoped("conversation") };
    this.countScoped = { run: counted("run"), agent: counted("agent"), daemon: counted("daemon"), conversation: counted("conversation") };
  }

  /**
   * The group commit: the rows in one transaction, synchronously when no row carries a write and
   * nothing holds the connection (the hot path). With row writes it is IMMEDIATE (another process
   * on the same file waits for it, never reads half of it) and holds the write gate while the
   * writes run: each event's write in a savepoint first, then the events whose writes held (one
   * whose write failed leaves a gap in the ids). Ids follow the newest stored one; when another
   * process on the same file took them meanwhile, the batch is numbered after its events and
   * committed once more.
   */
  append(rows: readonly EventRow[], writes?: ReadonlyArray<RowWrite | undefined>): MaybePromise<Array<number | Error>> {
    if (rows.length === 0) return [];
    const withWrites = !!writes && writes.some((w) => w !== undefined);
    if (!withWrites) return this.gate.run(() => this.retrying(() => (this.insertBatch(rows), undefined), rows));
    return this.gate.exclusive(async () => {
      try {
        return await this.withWritesOnce(rows, writes);
      } catch (err) {
        this.nextId = undefined;
        if ((err as { code?: string }).code !== "SQLITE_CONSTRAINT_PRIMARYKEY") throw err;
        return await this.withWritesOnce(rows, writes);
      }
    });
  }

  /** Number the rows, store them, and once more after renumbering when another process took their ids. */
  private retrying(store: () => Map<number, Error> | undefined, rows: readonly EventRow[]): Array<number | Error> {
    const attempt = () => {
      const next = this.number(rows);
      const failed = store();
      this.nextId = next;
      return rows.map((r) => failed?.get(r.id) ?? r.id);
    };
    try {
      return attempt();
    } catch (err) {
      this.nextId = undefined;
      if ((err as { code?: string }).code !== "SQLITE_CONSTRAINT_PRIMARYKEY") throw err;
      return attempt();
    }
  }

  /** Give the rows their ids; returns the id after them. */
  private number(rows: readonly EventRow[]): number {
    let id = (this.nextId ??= this.maxId() + 1);
    for (const r of rows) r.id = id++;
    return id;
  }

  private async withWritesOnce(rows: readonly EventRow[], writes: ReadonlyArray<RowWrite | undefined>): Promise<Array<number | Error>> {
    const sqlite = this.db.$client;
    const next = this.number(rows);
    const failed = new Map<number, Error>();
    const kept: EventRow[] = [];
    sqlite.exec("BEGIN IMMEDIATE");
    try {
      for (let i = 0; i < rows.length; i++) {
        const row = rows[i]!;
        const write = writes[i];
        if (write) {
          sqlite.exec("SAVEPOINT event_write");
          try {
            await write(this.db);
            sqlite.exec("RELEASE event_write");
          } catch (err) {
            sqlite.exec("ROLLBACK TO event_write");
            sqlite.exec("RELEASE event_write");
            failed.set(row.id, err instanceof Error ? err : new Error(String(err)));
            continue;
          }
        }
        kept.push(row);
      }
      if (kept.length > 0) this.insertBatch(kept);
      sqlite.exec("COMMIT");
    } catch (err) {
      if (sqlite.inTransaction) sqlite.exec("ROLLBACK");
      throw err;
    }
    this.nextId = next;
    return rows.map((r) => failed.get(r.id) ?? r.id);
  }

  maxId(): number {
    const row = this.db.$client.prepare("SELECT max(id) AS id FROM events").get() as { id: number | null };
    return row.id ?? 0;
  }

  /** Events with id > afterId, oldest first, optionally of one scope. */
  readAfter(afterId: number, scope: ScopeFilter | undefined, limit: number): BusEvent[] {
    const rows = (scope ? this.readScoped[scope.kind].all(scope.id, afterId, limit) : this.readAll.all(afterId, limit)) as RawRow[];
    return rows.map(toEvent);
  }

  count(afterId = 0, scope?: ScopeFilter): number {
    const row = (scope ? this.countScoped[scope.kind].get(scope.id, afterId) : this.countAll.get(afterId)) as { n: number };
    return row.n;
  }
}

function toEvent(r: RawRow): BusEvent {
  const scope: EventScope = {};
  if (r.run_id !== null) scope.runId = r.run_id;
  if (r.agent_id !== null) scope.agentId = r.agent_id;
  if (r.daemon_id !== null) scope.daemonId = r.daemon_id;
  if (r.conversation_id !== null) scope.conversationId = r.conversation_id;
  return { id: r.id, ts: new Date(r.ts).toISOString(), type: currentEventType(r.type), scope, payload: JSON.parse(r.payload) } as BusEvent;
}
