import type { AgentOutputLine, AgentStreamEvent } from "../../shared/agents";
import type { StoredLine } from "./log-store";
import type { LineParser } from "./providers/types";

/**
 * Lines written by Switchyard itself into an agent's log (setup output, the human's answers and
 * follow-ups, notes), so the log tells the whole story in order. They never reach a CLI parser.
 */
const OWN_PREFIX = '{"type":"switchyard"';

export type OwnLineKind = "setup" | "user_message" | "note";

export function ownLine(subtype: OwnLineKind, text: string): string {
  return JSON.stringify({ type: "switchyard", subtype, text, ts: new Date().toISOString() });
}

export function parseOwnLine(line: string): AgentStreamEvent[] | null {
  if (!line.startsWith(OWN_PREFIX)) return null;
  try {
    const v = JSON.parse(line) as { subtype?: string; text?: string };
    return [{ kind: "system", subtype: String(v.subtype ?? "note"), message: String(v.text ?? "") }];
  } catch {
    return null;
  }
}

/** Parse one stored line with a provider parser (own lines first). */
export function parseStoredLine(parser: LineParser, raw: string): AgentStreamEvent[] {
  if (raw.trim() === "") return [];
  return parseOwnLine(raw) ?? parser.parseLine(raw);
}

export interface ViewOptions {
  format: "events" | "raw" | "both";
  /** Longest text kept in a parsed field or a raw line; longer ones are cut and flagged. */
  maxFieldBytes: number;
}

export function toOutputLines(stored: StoredLine[], parser: LineParser, opts: ViewOptions): AgentOutputLine[] {
  return stored.map((s) => {
    const bytes = Buffer.byteLength(s.raw);
    const out: AgentOutputLine = { line: s.line, session: s.session, events: [], bytes };
    let truncated = false;
    if (opts.format !== "raw") {
      // a huge line is parsed from its head only: the view shows a cut version, raw is on demand
      const huge = s.raw.length > 64 * 1024 * 1024;
      const events = huge ? [{ kind: "raw", text: s.raw.slice(0, opts.maxFieldBytes) } as AgentStreamEvent] : parseStoredLine(parser, s.raw);
      out.events = events.map((e) => {
        const cut = cutEvent(e, opts.maxFieldBytes);
        if (cut !== e) truncated = true;
        return cut;
      });
      if (huge) truncated = true;
    }
    if (opts.format !== "events") {
      out.raw = s.raw.length > opts.maxFieldBytes ? s.raw.slice(0, opts.maxFieldBytes) : s.raw;
      if (out.raw !== s.raw) truncated = true;
    }
    if (truncated) out.truncated = true;
    return out;
  });
}

function cutEvent(e: AgentStreamEvent, max: number): AgentStreamEvent {
  switch (e.kind) {
    case "text":
    case "thinking":
    case "raw":
      return e.text.length > max ? { ...e, text: e.text.slice(0, max) } : e;
    case "tool_result":
      return e.output.length > max ? { ...e, output: e.output.slice(0, max) } : e;
    case "tool_call": {
      const json = JSON.stringify(e.input ?? null);
      return json.length > max ? { ...e, input: { truncated: json.slice(0, max) } } : e;
    }
    case "result":
      return e.message.length > max ? { ...e, message: e.message.slice(0, max) } : e;
    default:
      return e;
  }
}
