import type { Store } from "../db/store";
import type { EventFence } from "../events/event-store";
import { adapterOf, type AgentContext } from "./agent-context";
import { agentLogStoreOf } from "./log-storage";
import type { AgentLogStorage } from "./log-store";
import { ownLine, toOutputLines } from "./output-view";

export interface OutputQuery {
  fromLine?: number;
  limit: number;
  format: "events" | "raw" | "both";
  maxFieldBytes?: number;
}


/**
 * Agents' output: lines persisted in order with their `agent.output_produced` events, Switchyard's own
 * lines (notes, the user's messages), and pages of it parsed by the provider that wrote them.
 */
export class AgentOutput {
  readonly logs: AgentLogStorage;

  constructor(
    store: Store,
    private readonly ctx: Pick<AgentContext, "records" | "publish">,
  ) {
    this.logs = agentLogStoreOf(store);
  }

  /** Persist lines of a process run (up to `endOffset` of its output) and announce them; fenced by the watcher's lease when given. */
  async persist(agentId: string, session: number, lines: string[], endOffset: number, fence?: EventFence): Promise<void> {
    const refs = await this.logs.append(agentId, session, lines, endOffset, fence);
    await Promise.all(refs.map((ref) => this.ctx.publish(agentId, "agent.output_produced", ref)));
  }

  /** A line of Switchyard's own in the agent's log: a note, or what a user said to it. */
  async note(agentId: string, session: number, kind: "user_message" | "note", text: string): Promise<void> {
    await this.persist(agentId, session, [ownLine(kind, text)], (await this.ctx.records.get(agentId)).outputOffset);
  }

  /** Lines of the workspace's setup command, before the agent's first session. */
  async setup(agentId: string, lines: Array<{ line: string; stream: "stdout" | "stderr" }>): Promise<void> {
    if (lines.length === 0) return;
    await this.logs.append(
      agentId,
      0,
      lines.map((l) => ownLine("setup", l.stream === "stderr" ? `[stderr] ${l.line}` : l.line)),
    );
  }

  /** A page of an agent's output: parsed events and/or raw lines, by line range (or the tail). */
  async page(idOrId: string, q: OutputQuery) {
    // logs outlive a deleted agent: they stay readable by its id (parsed by the provider that wrote them)
    const row = (await this.ctx.records.find(idOrId)) ?? ((await this.logs.totalLines(idOrId)) > 0 ? { id: idOrId, provider: await this.logs.providerOf(idOrId) } : await this.ctx.records.get(idOrId));
    const total = await this.logs.totalLines(row.id);
    const limit = Math.min(Math.max(q.limit, 1), 5000);
    const fromLine = q.fromLine ?? Math.max(0, total - limit);
    const [stored, sessions] = await Promise.all([this.logs.readLines(row.id, fromLine, limit), this.logs.sessions(row.id)]);
    const lines = toOutputLines(stored, adapterOf(row.provider).createParser(), { format: q.format, maxFieldBytes: q.maxFieldBytes ?? 64 * 1024 });
    return { agentId: row.id, totalLines: total, fromLine, lines, sessions };
  }

  /** The lines of one persisted chunk, parsed (what an `agent.output_produced` event points at). */
  async chunk(agentId: string, chunkId: number, format: OutputQuery["format"] = "events") {
    const chunk = await this.logs.chunk(chunkId);
    if (!chunk || chunk.agentId !== agentId) return [];
    const provider = (await this.ctx.records.find(agentId))?.provider ?? (await this.logs.providerOf(agentId));
    const stored = chunk.lines.map((raw, i) => ({ line: chunk.firstLine + i, session: chunk.session, raw }));
    return toOutputLines(stored, adapterOf(provider).createParser(), { format, maxFieldBytes: 64 * 1024 });
  }

  /** What the agent said and which tools it called, from its last `lines` lines (a hand-over to a new session). */
  async transcript(agentId: string, lines = 400, maxChars = 12_000): Promise<string> {
    const total = await this.logs.totalLines(agentId);
    const page = await this.page(agentId, { fromLine: Math.max(0, total - lines), limit: lines, format: "events" });
    const notes: string[] = [];
    for (const line of page.lines) {
      for (const e of line.events) {
        if (e.kind === "text") notes.push(e.text);
        else if (e.kind === "tool_call") notes.push(`[tool ${e.name}] ${JSON.stringify(e.input ?? {}).slice(0, 300)}`);
      }
    }
    const transcript = notes.join("\n");
    return transcript.length > maxChars ? `…${transcript.slice(-maxChars)}` : transcript;
  }

  forget(agentId: string): void {
    this.logs.forget(agentId);
  }

  flush(): Promise<void> {
    return this.logs.flush();
  }
}
