import type { Db } from "../db/client";

/** Where a persisted batch of lines landed: what `agent.output` announces. */
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

interface Waiting {
  agentId: string;
  session: number;
  lines: string[];
  endOffset: number | undefined;
  resolve: (refs: ChunkRef[]) => void;
  reject: (err: Error) => void;
}

const MAX_CHUNK_LINES = 1000;
const MAX_CHUNK_BYTES = 1 << 20;
const COMMIT_WINDOW_MS = 4;
/** Whose parser reads a log from before `agent_logs`, of an agent deleted since: every one was read as Claude's then. */
const LEGACY_PROVIDER = "claude";

/**
 * `agent_log_chunks`: raw output lines in batches. `append` group-commits every agent's lines of
 * one event-loop turn in one transaction, together with each agent's output offset and line
 * count, so after a crash the offset and the stored lines always agree (no line lost or doubled).
 * `agent_logs` remembers the provider of each agent's log, written with its first chunk, so its
 * lines are parsed by the right adapter after the agent is deleted.
 */
export class AgentLogStore {
  private waiting: Waiting[] = [];
  private timer: NodeJS.Timeout | undefined;
  private immediate: NodeJS.Immediate | undefined;
  private pendingLines = 0;
  private readonly counters = new Map<string, { lines: number; seq: number }>();
  private readonly sqlite: Db["$client"];
  private readonly stmts;

  constructor(db: Db) {
    this.sqlite = db.$client;
    this.stmts = {
      insert: this.sqlite.prepare(
        "INSERT INTO agent_log_chunks (agent_id, session, seq, first_line, line_count, bytes, content, created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
      ),
      remember: this.sqlite.prepare("INSERT OR IGNORE INTO agent_logs (agent_id, provider) SELECT id, provider FROM agents WHERE id = ?"),
      providerOf: this.sqlite.prepare("SELECT provider FROM agent_logs WHERE agent_id = ?"),
      progress: this.sqlite.prepare("UPDATE agents SET line_count = ?, chunk_seq = ?, output_offset = COALESCE(?, output_offset) WHERE id = ?"),
      counters: this.sqlite.prepare("SELECT line_count AS lines, chunk_seq AS seq FROM agents WHERE id = ?"),
      fallbackCounters: this.sqlite.prepare(
        "SELECT COALESCE(MAX(first_line + line_count), 0) AS lines, COALESCE(MAX(seq), 0) AS seq FROM agent_log_chunks WHERE agent_id = ?",
      ),
      range: this.sqlite.prepare(
        `SELECT id, session, first_line AS firstLine, line_count AS lineCount, content FROM agent_log_chunks
         WHERE agent_id = ? AND first_line >= COALESCE((SELECT MAX(first_line) FROM agent_log_chunks WHERE agent_id = ? AND first_line <= ?), 0)
           AND first_line < ? ORDER BY first_line`,
      ),
      byId: this.sqlite.prepare("SELECT id, agent_id AS agentId, session, first_line AS firstLine, line_count AS lineCount, content FROM agent_log_chunks WHERE id = ?"),
      total: this.sqlite.prepare("SELECT COALESCE(MAX(first_line + line_count), 0) AS lines FROM agent_log_chunks WHERE agent_id = ?"),
      sessionBounds: this.sqlite.prepare(
        "SELECT session, MIN(first_line) AS fromLine, MAX(first_line + line_count) AS toLine FROM agent_log_chunks WHERE agent_id = ? GROUP BY session ORDER BY session",
      ),
    };
    // logs written before agent_logs existed: their agents' providers, while the rows are there
    this.sqlite.prepare("INSERT OR IGNORE INTO agent_logs (agent_id, provider) SELECT id, provider FROM agents WHERE line_count > 0").run();
  }

  /** Persist lines (in order) of one agent's session; resolves after the commit. */
  append(agentId: string, session: number, lines: string[], endOffset?: number): Promise<ChunkRef[]> {
    if (lines.length === 0) return Promise.resolve([]);
    return new Promise<ChunkRef[]>((resolve, reject) => {
      this.waiting.push({ agentId, session, lines, endOffset, resolve, reject });
      this.pendingLines += lines.length;
      if (this.pendingLines >= MAX_CHUNK_LINES) {
        // plenty to write already: no reason to wait for more
        if (this.timer) clearTimeout(this.timer);
        this.timer = undefined;
        this.immediate ??= setImmediate(() => this.flush());
        return;
      }
      // a short window gathers the output of many agents into one transaction (100 agents
      // writing in bursts would otherwise make a commit each)
      this.timer ??= setTimeout(() => this.flush(), COMMIT_WINDOW_MS);
    });
  }

  flush(): void {
    if (this.timer) clearTimeout(this.timer);
    if (this.immediate) clearImmediate(this.immediate);
    this.timer = undefined;
    this.immediate = undefined;
    this.pendingLines = 0;
    const batch = this.waiting;
    if (batch.length === 0) return;
    this.waiting = [];
    const results: ChunkRef[][] = [];
    const before = new Map([...this.counters].map(([k, v]) => [k, { ...v }]));
    try {
      this.sqlite.transaction(() => {
        for (const w of batch) results.push(this.insertLines(w));
      })();
    } catch (err) {
      // nothing of this batch is stored: put the counters back
      for (const w of batch) {
        const prev = before.get(w.agentId);
        if (prev) this.counters.set(w.agentId, prev);
        else this.counters.delete(w.agentId);
      }
      const error = err instanceof Error ? err : new Error(String(err));
      for (const w of batch) w.reject(error);
      return;
    }
    batch.forEach((w, i) => w.resolve(results[i]!));
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

  private insertLines(w: Waiting): ChunkRef[] {
    // the first append of an agent in this process: its provider is remembered (once: OR IGNORE)
    if (!this.counters.has(w.agentId)) this.stmts.remember.run(w.agentId);
    const c = this.countersOf(w.agentId);
    const refs: ChunkRef[] = [];
    const now = Date.now();
    let start = 0;
    while (start < w.lines.length) {
      let end = start;
      let bytes = 0;
      while (end < w.lines.length && end - start < MAX_CHUNK_LINES && (end === start || bytes + w.lines[end]!.length < MAX_CHUNK_BYTES)) {
        bytes += w.lines[end]!.length + 1;
        end++;
      }
      const content = w.lines.slice(start, end).join("\n");
      c.seq += 1;
      const info = this.stmts.insert.run(w.agentId, w.session, c.seq, c.lines, end - start, content.length, content, now);
      refs.push({ chunkId: Number(info.lastInsertRowid), session: w.session, fromLine: c.lines, lineCount: end - start, bytes: content.length });
      c.lines += end - start;
      start = end;
    }
    this.stmts.progress.run(c.lines, c.seq, w.endOffset ?? null, w.agentId);
    return refs;
  }

  /** Forget cached counters (after an agent row is deleted). */
  forget(agentId: string): void {
    this.counters.delete(agentId);
  }

  /** Lines [fromLine, fromLine + count) of an agent, in order. */
  readLines(agentId: string, fromLine: number, count: number): StoredLine[] {
    const end = fromLine + count;
    const rows = this.stmts.range.all(agentId, agentId, fromLine, end) as Array<{ session: number; firstLine: number; lineCount: number; content: string }>;
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

  chunk(chunkId: number): { agentId: string; session: number; firstLine: number; lines: string[] } | undefined {
    const row = this.stmts.byId.get(chunkId) as { agentId: string; session: number; firstLine: number; content: string } | undefined;
    if (!row) return undefined;
    return { agentId: row.agentId, session: row.session, firstLine: row.firstLine, lines: row.content.split("\n") };
  }

  /** The provider whose CLI wrote an agent's log (its parser reads it), the agent's row gone or not. */
  providerOf(agentId: string): string {
    return (this.stmts.providerOf.get(agentId) as { provider: string } | undefined)?.provider ?? LEGACY_PROVIDER;
  }

  totalLines(agentId: string): number {
    return (this.stmts.total.get(agentId) as { lines: number }).lines;
  }

  sessions(agentId: string): Array<{ session: number; fromLine: number; toLine: number }> {
    return this.stmts.sessionBounds.all(agentId) as Array<{ session: number; fromLine: number; toLine: number }>;
  }
}
