import Database from "better-sqlite3";
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { REPO_ROOT } from "../paths";

/**
 * A bare limit's SQLite file: the same tables and indexes as Switchyard's (the migrations'
 * SQL, run as it is) and the same pragmas (WAL, synchronous=NORMAL, page cache), written with
 * plain prepared statements: what a program doing the same job without Switchyard would do.
 * SQLite's own automatic checkpoint is left on.
 */
export function openBareDb(path: string): Database.Database {
  const db = new Database(path);
  db.pragma("journal_mode = WAL");
  db.pragma("synchronous = NORMAL");
  db.pragma("temp_store = MEMORY");
  db.pragma("cache_size = -32000");
  const dir = join(REPO_ROOT, "drizzle");
  for (const file of readdirSync(dir).filter((f) => f.endsWith(".sql")).sort()) {
    for (const statement of readFileSync(join(dir, file), "utf8").split("--> statement-breakpoint")) {
      if (statement.trim()) db.exec(statement);
    }
  }
  return db;
}

export type BareEvent = { id: number; ts: string; type: string; scope: Record<string, string>; payload: unknown };

/** Rows per multi-row INSERT statement. */
const CHUNK = 64;
const ROW = "(?, ?, ?, ?, ?, ?, ?, ?)";

/**
 * Events committed in one transaction per event-loop turn (at most `maxBatch` rows), each with
 * the next id, inserted by multi-row INSERT statements (CHUNK rows a call into SQLite); then
 * `onCommit` gets the batch. The group commit a bus needs, written plainly.
 */
export class BareEventLog {
  private pending: Array<{ event: BareEvent; at: number; json: string; done?: () => void }> = [];
  private timer: NodeJS.Immediate | undefined;
  private readonly commit: (rows: Array<{ event: BareEvent; at: number; json: string }>) => void;
  lastId = 0;

  constructor(
    db: Database.Database,
    private readonly onCommit: (events: BareEvent[]) => void = () => {},
    private readonly maxBatch = 4096,
  ) {
    const insert = (n: number) => db.prepare(`INSERT INTO events (id, ts, type, run_id, agent_id, daemon_id, conversation_id, payload) VALUES ${Array(n).fill(ROW).join(", ")}`);
    const one = insert(1);
    const many = insert(CHUNK);
    const values = ({ event: e, at, json }: { event: BareEvent; at: number; json: string }) => [e.id, at, e.type, e.scope.runId ?? null, e.scope.agentId ?? null, e.scope.daemonId ?? null, e.scope.conversationId ?? null, json];
    this.commit = db.transaction((rows: Array<{ event: BareEvent; at: number; json: string }>) => {
      let i = 0;
      for (; i + CHUNK <= rows.length; i += CHUNK) many.run(rows.slice(i, i + CHUNK).flatMap(values));
      for (; i < rows.length; i++) one.run(values(rows[i]!));
    });
    this.lastId = (db.prepare("SELECT max(id) AS id FROM events").get() as { id: number | null }).id ?? 0;
  }

  append(type: string, payload: unknown, scope: Record<string, string> = {}, done?: () => void): void {
    const at = Date.now();
    const event: BareEvent = { id: 0, ts: new Date(at).toISOString(), type, scope, payload };
    this.pending.push({ event, at, json: JSON.stringify(payload), ...(done ? { done } : {}) });
    if (this.pending.length >= this.maxBatch) this.flush();
    else this.timer ??= setImmediate(() => this.flush());
  }

  flush(): void {
    if (this.timer) clearImmediate(this.timer);
    this.timer = undefined;
    const batch = this.pending;
    if (batch.length === 0) return;
    this.pending = [];
    for (const p of batch) p.event.id = ++this.lastId;
    this.commit(batch);
    this.onCommit(batch.map((p) => p.event));
    for (const p of batch) p.done?.();
  }
}
