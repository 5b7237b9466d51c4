import type { Statement, Transaction } from "better-sqlite3";
import type { BusEvent, EventScope, ScopeFilter, ScopeKind } from "../../shared/events";
import type { Db } from "../db/client";

/** One row as the bus hands it to the store: payload already serialized; `id` is set by the store's `append`. */
export type EventRow = {
  id: number;
  ts: number;
  type: string;
  scope: EventScope;
  payloadJson: string;
};

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
   * write (`writes[i]`, same transaction, a savepoint of its own) that throws drops only that row.
   * Per row: its id, or the error of its write. Throws when nothing was stored.
   */
  append(rows: readonly EventRow[], writes?: ReadonlyArray<(() => void) | undefined>): MaybePromise<Array<number | Error>>;
  /** Events with id > afterId, oldest first, optionally of one scope. */
  readAfter(afterId: number, scope: ScopeFilter | undefined, limit: number): MaybePromise<BusEvent[]>;
  count(afterId?: number, scope?: ScopeFilter): MaybePromise<number>;
  /** Commits of other processes on the same store, as they happen: the newest id each committed. */
  watch?(onCommit: (lastId: number) => void): Promise<() => Promise<void>>;
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
  private readonly insertBatch: (rows: readonly EventRow[]) => void;
  private readonly withWrites: Transaction<(rows: readonly EventRow[], writes: ReadonlyArray<(() => void) | undefined>) => Map<number, Error>>;
  /** Inside a transaction, better-sqlite3 runs a nested one as a SAVEPOINT: rolled back alone when `fn` throws. */
  private readonly savepoint: (fn: () => void) => void;
  private readonly readAll: Statement;
  private readonly readScoped: Record<ScopeKind, Statement>;
  private readonly countAll: Statement;
  private readonly countScoped: Record<ScopeKind, Statement>;

  constructor(private readonly db: Db) {
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
    this.withWrites = sqlite.transaction((rows: readonly EventRow[], writes: ReadonlyArray<(() => void) | undefined>) => this.withWritesTx(rows, writes));
    this.savepoint = sqlite.transaction((fn: () => void) => fn());
    this.readAll = sqlite.prepare(`${SELECT} WHERE id > ? ORDER BY id LIMIT ?`);
    this.countAll = sqlite.prepare("SELECT count(*) AS n FROM events WHERE id > ?");
    const scoped = (kind: ScopeKind) => sqlite.prepare(`${SELECT} WHERE ${COLUMN[kind]} = ? AND id > ? ORDER BY id LIMIT ?`);
    const counted = (kind: ScopeKind) => sqlite.prepare(`SELECT count(*) AS n FROM events WHERE ${COLUMN[kind]} = ? AND id > ?`);
    this.readScoped = { run: scoped("run"), agent: scoped("agent"), daemon: scoped("daemon"), conversation: scoped("conversation") };
    this.countScoped = { run: counted("run"), agent: counted("agent"), daemon: counted("daemon"), conversation: counted("conversation") };
  }

  /**
   * The group commit: the rows in one transaction. With row writes it is IMMEDIATE (another
   * process on the same file waits for it, never reads half of it): each event's write in a
   * savepoint first, then the events whose writes held (one whose write failed leaves a gap in
   * the ids). Ids follow the newest stored one; when another process on the same file took them
   * meanwhile, the batch is numbered after its events and committed once more.
   */
  append(rows: readonly EventRow[], writes?: ReadonlyArray<(() => void) | undefined>): Array<number | Error> {
    if (rows.length === 0) return [];
    const withWrites = !!writes && writes.some((w) => w !== undefined);
    const attempt = (): Array<number | Error> => {
      let id = (this.nextId ??= this.maxId() + 1);
      for (const r of rows) r.id = id++;
      const failed = withWrites ? this.withWrites.immediate(rows, writes!) : (this.insertBatch(rows), undefined);
      this.nextId = id;
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

  private withWritesTx(rows: readonly EventRow[], writes: ReadonlyArray<(() => void) | undefined>): Map<number, Error> {
    const failed = new Map<number, Error>();
    const kept: EventRow[] = [];
    rows.forEach((row, i) => {
      const write = writes[i];
      if (write) {
        try {
          this.savepoint(write);
        } catch (err) {
          failed.set(row.id, err instanceof Error ? err : new Error(String(err)));
          return;
        }
      }
      kept.push(row);
    });
    if (kept.length > 0) this.insertBatch(kept);
    return failed;
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
  return { id: r.id, ts: new Date(r.ts).toISOString(), type: r.type, scope, payload: JSON.parse(r.payload) } as BusEvent;
}
