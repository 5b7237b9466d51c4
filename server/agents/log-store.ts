import type { Statement, Transaction } from "better-sqlite3";
import type { SessionBounds } from "../../shared/agents";
import type { SqliteStore } from "../db/sqlite-store";
import type { WriteGate } from "../db/write-gate";
import type { EventFence } from "../events/event-store";

/** Where a persisted batch of lines landed: what `agent.output_produced` announces. */
export interface ChunkRef {
  chunkId: number;
  session: number;
  fromLine: number;
  lineCount: number;
  bytes: number;
}

export interface StoredLine {
  line: number;
  session: number;
  raw: string;
}

export interface LogChunk {
  agentId: string;
  session: number;
  firstLine: number;
  lines: string[];
}

/**
 * Agents' raw output lines, in batches (`agent_log_chunks`), on either store: `AgentLogStore`
 * (SQLite, prepared statements) or `PgAgentLogStore` (PostgreSQL, pg-log-store.ts). `append`
 * group-commits; every agent's lines are stored together with its output offset and line count,
 * so after a crash the offset and the stored lines always agree (no line lost or doubled).
 * `agent_logs` remembers the provider of each agent's log, so its lines are parsed by the right
 * adapter after the agent is deleted.
 */
export interface AgentLogStorage {
  /**
   * Persist lines (in order) of one agent's session; resolves after the commit. With a `fence`
   * (the watching server's lease on the agent), a store several servers share stores them only
   * while that lease is still this server's at that epoch, else rejects with LEASE_LOST.
   */
  append(agentId: string, session: number, lines: string[], endOffset?: number, fence?: EventFence): Promise<ChunkRef[]>;
  /** Commit what waits now (and after the commit under way); resolves once it is stored. */
  flush(): Promise<void>;
  /** Forget what this process remembers of an agent's log (after its row is deleted). */
  forget(agentId: string): void;
  /** Lines [fromLine, fromLine + count) of an agent, in order. */
  readLines(agentId: string, fromLine: number, count: number): Promise<StoredLine[]>;
  chunk(chunkId: number): Promise<LogChunk | undefined>;
  /** The provider whose CLI wrote an agent's log (its parser reads it), the agent's row gone or not. */
  providerOf(agentId: string): Promise<string>;
  totalLines(agentId: string): Promise<number>;
  sessions(agentId: string): Promise<SessionBounds[]>;
}

/** One `append` waiting for the commit. */
export interface LogAppend {
  agentId: string;
  session: number;
  lines: string[];
  endOffset: number | undefined;
  fence?: EventFence;
  resolve: (refs: ChunkRef[]) => void;
  reject: (err: Error) => void;
}

/** Per append of a batch: where its lines landed, or why they were not stored. */
export type CommitResult = Array<ChunkRef[] | Error>;

export const MAX_CHUNK_LINES = 1000;
const MAX_CHUNK_BYTES = 1 << 20;
const COMMIT_WINDOW_MS = 4;
/** Whose parser reads a log from before `agent_logs`, of an agent deleted since: every one was read as Claude's then. */
export const LEGACY_PROVIDER = "claude";

const isPromise = <T>(v: T | Promise<T>): v is Promise<T> => typeof (v as { then?: unknown } | null)?.then === "function";

/** An append's lines cut into chunks: at most MAX_CHUNK_LINES lines and about MAX_CHUNK_BYTES each. */
export function chunksOf(lines: readonly string[]): string[][] {
  const out: string[][] = [];
  let start = 0;
  while (start < lines.length) {
    let end = start;
    let bytes = 0;
    while (end < lines.length && end - start < MAX_CHUNK_LINES && (end === start || bytes + lines[end]!.length < MAX_CHUNK_BYTES)) {
      bytes += lines[end]!.length + 1;
      end++;
    }
    out.push(lines.slice(start, end));
    start = end;
  }
  return out;
}

/** A stored chunk's lines within [fromLine, end), in order. */
export function linesIn(rows: ReadonlyArray<{ session: number; firstLine: number; lineCount: number; content: string }>, fromLine: number, count: number): StoredLine[] {
  const end = fromLine + count;
  const out: StoredLine[] = [];
  for (const row of rows) {
    if (row.firstLine + row.lineCount <= fromLine) continue;
    const lines = row.content.split("\n");
    for (let i = 0; i < lines.length; i++) {
      const line = row.firstLine + i;
      if (line < fromLine || line >= end) continue;
      out.push({ line, session: row.session, raw: lines[i]! });
    }
  }
  return out;
}

/**
 * The group commit both stores share: appends of one event-loop turn (a short window, or at once
 * past MAX_CHUNK_LINES) are committed together, one commit at a time (an agent's lines land in
 * the order they were appended). `commit` stores a batch, synchronously when it can.
 */
export abstract class LogGroupCommit {
  private waiting: LogAppend[] = [];
  private timer: NodeJS.Timeout | undefined;
  private immediate: NodeJS.Immediate | undefined;
  private pendingLines = 0;
  /** The commit under way: the next batch waits for it. */
  private committing: Promise<void> | undefined;

  protected abstract commit(batch: readonly LogAppend[]): CommitResult | Promise<CommitResult>;

  append(agentId: string, session: number, lines: string[], endOffset?: number, fence?: EventFence): Promise<ChunkRef[]> {
    if (lines.length === 0) return Promise.resolve([]);
    return new Promise<ChunkRef[]>((resolve, reject) => {
      this.waiting.push({ agentId, session, lines, endOffset, resolve, reject, ...(fence ? { fence } : {}) });
      this.pendingLines += lines.length;
      if (this.pendingLines >= MAX_CHUNK_LINES) {
        // plenty to write already: no reason to wait for more
        if (this.timer) clearTimeout(this.timer);
        this.timer = undefined;
        this.immediate ??= setImmediate(() => void this.flush());
        return;
      }
      // a short window gathers the output of many agents into one transaction (100 agents
      // writing in bursts would otherwise make a commit each)
      this.timer ??= setTimeout(() => void this.flush(), COMMIT_WINDOW_MS);
    });
  }

  flush(): Promise<void> {
    if (this.timer) clearTimeout(this.timer);
    if (this.immediate) clearImmediate(this.immediate);
    this.timer = undefined;
    this.immediate = undefined;
    if (this.committing) return this.committing.then(() => this.flush());
    const batch = this.waiting;
    this.waiting = [];
    this.pendingLines = 0;
    if (batch.length === 0) return Promise.resolve();
    let result: CommitResult | Promise<CommitResult>;
    try {
      result = this.commit(batch);
    } catch (err) {
      this.settle(batch, err);
      return Promise.resolve();
    }
    if (!isPromise(result)) {
      this.settle(batch, result);
      return Promise.resolve();
    }
    const done: Promise<void> = result
      .then(
        (r) => this.settle(batch, r),
        (err: unknown) => this.settle(batch, err),
      )
      .finally(() => {
        if (this.committing === done) this.committing = undefined;
      });
    this.committing = done;
    return done;
  }

  /** Each append learns where its lines landed, or why they were not stored. */
  private settle(batch: readonly LogAppend[], result: CommitResult | unknown): void {
    if (!Array.isArray(result)) {
      const error = result instanceof Error ? result : new Error(String(result));
      for (const w of batch) w.reject(error);
      return;
    }
    batch.forEach((w, i) => {
      const r = (result as CommitResult)[i];
      if (r instanceof Error || r === undefined) w.reject(r ?? new Error("the log store returned nothing for this append"));
      else w.resolve(r);
    });
  }
}

/**
 * The log on SQLite: a batch is one transaction of prepared statements, run synchronously when
 * nothing holds the connection (else right after the transaction that does: the store's write
 * gate), with each agent's counters cached in this process.
 */
export class AgentLogStore extends LogGroupCommit implements AgentLogStorage {
  private readonly counters = new Map<string, { lines: number; seq: number }>();
  private readonly gate: WriteGate;
  private readonly transaction: Transaction<(batch: readonly LogAppend[]) => ChunkRef[][]>;
  private readonly stmts: Record<"insert" | "remember" | "providerOf" | "progress" | "counters" | "fallbackCounters" | "range" | "byId" | "total" | "sessionBounds", Statement>;

  constructor(store: SqliteStore) {
    super();
    const sqlite = store.db.$client;
    this.gate = store.gate;
    this.stmts = {
      insert: sqlite.prepare("INSERT INTO agent_log_chunks (agent_id, session, seq, first_line, line_count, bytes, content, created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?)"),
      remember: sqlite.prepare("INSERT OR IGNORE INTO agent_logs (agent_id, provider) SELECT id, provider FROM agents WHERE id = ?"),
      providerOf: sqlite.prepare("SELECT provider FROM agent_logs WHERE agent_id = ?"),
      progress: sqlite.prepare("UPDATE agents SET line_count = ?, chunk_seq = ?, output_offset = COALESCE(?, output_offset) WHERE id = ?"),
      counters: sqlite.prepare("SELECT line_count AS lines, chunk_seq AS seq FROM agents WHERE id = ?"),
      fallbackCounters: sqlite.prepare("SELECT COALESCE(MAX(first_line + line_count), 0) AS lines, COALESCE(MAX(seq), 0) AS seq FROM agent_log_chunks WHERE agent_id = ?"),
      range: sqlite.prepare(
        `SELECT id, session, first_line AS firstLine, line_count AS lineCount, content FROM agent_log_chunks
         WHERE agent_id = ? AND first_line >= COALESCE((SELECT MAX(first_line) FROM agent_log_chunks WHERE agent_id = ? AND first_line <= ?), 0)
           AND first_line < ? ORDER BY first_line`,
      ),
      byId: sqlite.prepare("SELECT id, agent_id AS agentId, session, first_line AS firstLine, line_count AS lineCount, content FROM agent_log_chunks WHERE id = ?"),
      // the last chunk's end (an agent's chunks are contiguous): one step of the line index, not a scan of the log's chunks
      total: sqlite.prepare("SELECT first_line + line_count AS lines FROM agent_log_chunks WHERE agent_id = ? ORDER BY first_line DESC LIMIT 1"),
      sessionBounds: sqlite.prepare("SELECT session, MIN(first_line) AS fromLine, MAX(first_line + line_count) AS toLine FROM agent_log_chunks WHERE agent_id = ? GROUP BY session ORDER BY session"),
    };
    this.transaction = sqlite.transaction((batch: readonly LogAppend[]) => batch.map((w) => this.insertLines(w)));
    // logs written before agent_logs existed: their agents' providers, while the rows are there
    const legacy = sqlite.prepare("INSERT OR IGNORE INTO agent_logs (agent_id, provider) SELECT id, provider FROM agents WHERE line_count > 0");
    void this.gate.run(() => legacy.run());
  }

  protected commit(batch: readonly LogAppend[]): CommitResult | Promise<CommitResult> {
    return this.gate.run(() => this.commitNow(batch));
  }

  private commitNow(batch: readonly LogAppend[]): CommitResult {
    const before = new Map([...this.counters].map(([k, v]) => [k, { ...v }]));
    try {
      return this.transaction(batch);
    } catch (err) {
      // nothing of this batch is stored: put the counters back
      for (const w of batch) {
        const prev = before.get(w.agentId);
        if (prev) this.counters.set(w.agentId, prev);
        else this.counters.delete(w.agentId);
      }
      throw err;
    }
  }

  private countersOf(agentId: string): { lines: number; seq: number } {
    let c = this.counters.get(agentId);
    if (!c) {
      const row = (this.stmts.counters.get(agentId) ?? this.stmts.fallbackCounters.get(agentId)) as { lines: number; seq: number };
      c = { lines: row.lines, seq: row.seq };
      this.counters.set(agentId, c);
    }
    return c;
  }

  private insertLines(w: LogAppend): ChunkRef[] {
    // the first append of an agent in this process: its provider is remembered (once: OR IGNORE)
    if (!this.counters.has(w.agentId)) this.stmts.remember.run(w.agentId);
    const c = this.countersOf(w.agentId);
    const refs: ChunkRef[] = [];
    const now = Date.now();
    for (const lines of chunksOf(w.lines)) {
      const content = lines.join("\n");
      c.seq += 1;
      const info = this.stmts.insert.run(w.agentId, w.session, c.seq, c.lines, lines.length, content.length, content, now);
      refs.push({ chunkId: Number(info.lastInsertRowid), session: w.session, fromLine: c.lines, lineCount: lines.length, bytes: content.length });
      c.lines += lines.length;
    }
    this.stmts.progress.run(c.lines, c.seq, w.endOffset ?? null, w.agentId);
    return refs;
  }

  forget(agentId: string): void {
    this.counters.delete(agentId);
  }

  async readLines(agentId: string, fromLine: number, count: number): Promise<StoredLine[]> {
    const rows = this.stmts.range.all(agentId, agentId, fromLine, fromLine + count) as Array<{ session: number; firstLine: number; lineCount: number; content: string }>;
    return linesIn(rows, fromLine, count);
  }

  async chunk(chunkId: number): Promise<LogChunk | undefined> {
    const row = this.stmts.byId.get(chunkId) as { agentId: string; session: number; firstLine: number; content: string } | undefined;
    if (!row) return undefined;
    return { agentId: row.agentId, session: row.session, firstLine: row.firstLine, lines: row.content.split("\n") };
  }

  async providerOf(agentId: string): Promise<string> {
    return (this.stmts.providerOf.get(agentId) as { provider: string } | undefined)?.provider ?? LEGACY_PROVIDER;
  }

  async totalLines(agentId: string): Promise<number> {
    return (this.stmts.total.get(agentId) as { lines: number } | undefined)?.lines ?? 0;
  }

  async sessions(agentId: string): Promise<SessionBounds[]> {
    return this.stmts.sessionBounds.all(agentId) as SessionBounds[];
  }
}
