import type { AgentStreamEvent, AgentUsage } from "../../../shared/agents";
import type { LineParser } from "./types";

/**
 * Claude Code `--output-format stream-json --verbose`: `system/init`, one `assistant` line per
 * content block, `user` lines with tool results, a final `result`. Usage is taken from the result
 * line only (assistant lines carry partial per-message figures; adding them up double-counts).
 * `stream_event` lines (--include-partial-messages) are skipped: the full blocks follow anyway.
 */

type Json = Record<string, unknown>;

const isObject = (v: unknown): v is Json => typeof v === "object" && v !== null && !Array.isArray(v);
const str = (v: unknown): string | undefined => (typeof v === "string" ? v : undefined);
const num = (v: unknown): number | undefined => (typeof v === "number" && Number.isFinite(v) ? v : undefined);

const RATE_LIMIT_TEXT = /usage limit|rate limit|hit your limit|rate_limit/i;
/** How Claude Code words a subscription limit in the synthetic assistant message it prints. */
const LIMIT_MESSAGE = /usage limit reached|you['’]ve hit your (usage )?limit/i;

/** "Claude AI usage limit reached|1760000000" -> the reset time in ISO. */
function resetsAtOf(text: string): string | undefined {
  const m = /\|(\d{9,11})\s*$/.exec(text.trim());
  return m ? new Date(Number(m[1]) * 1000).toISOString() : undefined;
}

function toolResultText(content: unknown): string {
  if (typeof content === "string") return content;
  if (Array.isArray(content)) {
    return content
      .map((c) => (isObject(c) && typeof c.text === "string" ? c.text : isObject(c) && c.type === "image" ? "[image]" : ""))
      .filter(Boolean)
      .join("\n");
  }
  return content === undefined || content === null ? "" : JSON.stringify(content);
}

export function usageOf(u: unknown, costUsd?: number): AgentUsage {
  const usage: AgentUsage = { inputTokens: 0, outputTokens: 0 };
  if (isObject(u)) {
    usage.inputTokens = num(u.input_tokens) ?? 0;
    usage.outputTokens = num(u.output_tokens) ?? 0;
    const cacheRead = num(u.cache_read_input_tokens);
    const cacheWrite = num(u.cache_creation_input_tokens);
    if (cacheRead !== undefined) usage.cacheReadTokens = cacheRead;
    if (cacheWrite !== undefined) usage.cacheWriteTokens = cacheWrite;
  }
  if (costUsd !== undefined) usage.costUsd = costUsd;
  return usage;
}

export class ClaudeParser implements LineParser {
  private readonly toolNames = new Map<string, string>();

  /** Model output and tool results; not an assistant line carrying an error or a synthetic (CLI-made) message. */
  isRoutine(line: string): boolean {
    if (line.startsWith('{"type":"assistant"')) return !line.includes('"error":') && !line.includes('"<synthetic>"');
    return line.startsWith('{"type":"user"') || line.startsWith('{"type":"stream_event"');
  }

  parseLine(line: string): AgentStreamEvent[] {
    if (line.trim() === "") return [];
    let v: unknown;
    try {
      v = JSON.parse(line);
    } catch {
      return [{ kind: "raw", text: line }];
    }
    if (!isObject(v)) return [{ kind: "raw", text: line }];
    switch (v.type) {
      case "system":
        return this.system(v);
      case "assistant":
        return this.assistant(v);
      case "user":
        return this.user(v);
      case "result":
        return this.result(v);
      case "stream_event":
        return [];
      default:
        return [{ kind: "raw", text: line }];
    }
  }

  private system(v: Json): AgentStreamEvent[] {
    if (v.subtype === "init" && typeof v.session_id === "string") {
      const e: AgentStreamEvent = { kind: "session", sessionId: v.session_id };
      if (str(v.model)) e.model = str(v.model);
      if (str(v.cwd)) e.cwd = str(v.cwd);
      return [e];
    }
    const subtype = str(v.subtype) ?? "system";
    if (subtype === "status") return []; // "requesting" heartbeats
    if (subtype === "api_retry") {
      const attempt = num(v.attempt);
      const error = str(v.error) ?? str(v.error_status) ?? "";
      const retry: AgentStreamEvent = { kind: "system", subtype, message: `retrying the API call${attempt !== undefined ? ` (attempt ${attempt})` : ""}${error ? `: ${error}` : ""}` };
      // a 429 (also an in-band rate_limit_error, which the CLI reports as 429): the CLI backs off
      // and retries for minutes; marked `retrying` so the agents service can fail over at once
      if (num(v.error_status) === 429) return [retry, { kind: "rate_limit", message: `HTTP 429 (${str(v.error) ?? "rate limited"}): the CLI is retrying`, retrying: true }];
      return [retry];
    }
    return [{ kind: "system", subtype, message: str(v.message) ?? str(v.status) ?? subtype }];
  }

  private assistant(v: Json): AgentStreamEvent[] {
    const message = isObject(v.message) ? v.message : {};
    const messageId = str(message.id);
    const out: AgentStreamEvent[] = [];
    const content = Array.isArray(message.content) ? message.content : [];
    for (const block of content) {
      if (!isObject(block)) continue;
      if (block.type === "text" && typeof block.text === "string") out.push(messageId ? { kind: "text", text: block.text, messageId } : { kind: "text", text: block.text });
      else if (block.type === "thinking" && typeof block.thinking === "string") out.push({ kind: "thinking", text: block.thinking, ...(messageId ? { messageId } : {}) });
      else if (block.type === "redacted_thinking") out.push({ kind: "thinking", text: "[redacted]", ...(messageId ? { messageId } : {}) });
      else if (block.type === "tool_use" && typeof block.id === "string") {
        const name = str(block.name) ?? "tool";
        this.toolNames.set(block.id, name);
        out.push({ kind: "tool_call", id: block.id, name, input: block.input ?? {} });
      }
    }
    const limit = this.rateLimitOf(v, out);
    if (limit) out.push(limit);
    return out;
  }

  /** `"error":"rate_limit"` on the line, or the CLI's own "usage limit reached" / "You've hit your limit" text. */
  private rateLimitOf(v: Json, blocks: AgentStreamEvent[]): AgentStreamEvent | undefined {
    const text = blocks.find((e): e is Extract<AgentStreamEvent, { kind: "text" }> => e.kind === "text")?.text;
    const error = str(v.error);
    const flagged = error !== undefined && RATE_LIMIT_TEXT.test(error);
    if (!flagged && !(text !== undefined && LIMIT_MESSAGE.test(text))) return undefined;
    const message = text ?? error ?? "rate limited";
    const resetsAt = resetsAtOf(message);
    return { kind: "rate_limit", message, ...(resetsAt ? { resetsAt } : {}) };
  }

  private user(v: Json): AgentStreamEvent[] {
    const message = isObject(v.message) ? v.message : {};
    const content = Array.isArray(message.content) ? message.content : [];
    const out: AgentStreamEvent[] = [];
    for (const block of content) {
      if (!isObject(block) || block.type !== "tool_result" || typeof block.tool_use_id !== "string") continue;
      const name = this.toolNames.get(block.tool_use_id);
      out.push({ kind: "tool_result", id: block.tool_use_id, ...(name ? { name } : {}), output: toolResultText(block.content), isError: block.is_error === true });
    }
    return out;
  }

  private result(v: Json): AgentStreamEvent[] {
    const isError = v.is_error === true;
    const message = str(v.result) ?? (Array.isArray(v.errors) ? v.errors.map(String).join("; ") : "");
    const out: AgentStreamEvent[] = [];
    if (isError && (RATE_LIMIT_TEXT.test(message) || v.api_error_status === 429)) {
      const resetsAt = resetsAtOf(message);
      out.push({ kind: "rate_limit", message, ...(resetsAt ? { resetsAt } : {}) });
    }
    out.push({ kind: "usage", usage: usageOf(v.usage, num(v.total_cost_usd)) });
    const result: AgentStreamEvent = { kind: "result", isError, message };
    if (str(v.subtype)) result.subtype = str(v.subtype);
    if (str(v.session_id)) result.sessionId = str(v.session_id);
    if (num(v.num_turns) !== undefined) result.numTurns = num(v.num_turns);
    if (num(v.duration_ms) !== undefined) result.durationMs = num(v.duration_ms);
    if (Array.isArray(v.permission_denials)) {
      result.permissionDenials = v.permission_denials.filter(isObject).map((d) => ({ toolName: str(d.tool_name) ?? "tool", input: d.tool_input }));
    }
    out.push(result);
    return out;
  }
}
