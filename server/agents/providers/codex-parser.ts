import type { AgentStreamEvent, AgentUsage } from "../../../shared/agents";
import type { LineParser } from "./types";

/**
 * Codex `exec --json`: thread.started, turn.started, item.started / item.completed (agent_message,
 * reasoning, command_execution, file_change, mcp_tool_call, error = a WARNING), turn.completed with
 * CUMULATIVE usage (emitted as the run's totals, never summed), turn.failed / error on failure.
 * A top-level `error` "Reconnecting... 1/5 (stream disconnected ...)" is a retry notice, not a
 * failure (codex 0.169 prints it and then completes the turn). Non-JSON lines (its stderr
 * warnings when mixed in) become raw events.
 */

type Json = Record<string, unknown>;
const isObject = (v: unknown): v is Json => typeof v === "object" && v !== null && !Array.isArray(v);
const str = (v: unknown): string | undefined => (typeof v === "string" ? v : undefined);
const num = (v: unknown): number | undefined => (typeof v === "number" && Number.isFinite(v) ? v : undefined);

const RATE_LIMIT = /\b429\b|rate.?limit|usage limit|too many requests/i;
const RETRY_NOTICE = /^\s*reconnecting\b/i;

function usageOf(u: unknown): AgentUsage {
  const usage: AgentUsage = { inputTokens: 0, outputTokens: 0 };
  if (!isObject(u)) return usage;
  usage.inputTokens = num(u.input_tokens) ?? 0;
  usage.outputTokens = num(u.output_tokens) ?? 0;
  const cached = num(u.cached_input_tokens);
  const cacheWrite = num(u.cache_write_input_tokens);
  const reasoning = num(u.reasoning_output_tokens);
  if (cached !== undefined) usage.cacheReadTokens = cached;
  if (cacheWrite !== undefined) usage.cacheWriteTokens = cacheWrite;
  if (reasoning !== undefined) usage.reasoningTokens = reasoning;
  return usage;
}

/** An MCP tool result: its text content blocks, else the whole result as JSON. */
function mcpResultText(result: unknown): string {
  if (typeof result === "string") return result;
  const content = isObject(result) && Array.isArray(result.content) ? result.content : [];
  const texts = content.filter(isObject).map((c) => str(c.text)).filter((t): t is string => t !== undefined);
  return texts.length > 0 ? texts.join("\n") : JSON.stringify(result);
}

export class CodexParser implements LineParser {
  private readonly started = new Set<string>();
  private lastMessage = "";
  /** The last fatal `error` message: the `turn.failed` that repeats it adds only the result. */
  private lastFatal: string | undefined;

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
      case "thread.started":
        return typeof v.thread_id === "string" ? [{ kind: "session", sessionId: v.thread_id }] : [];
      case "turn.started":
        return [];
      case "item.started":
        return isObject(v.item) ? this.itemStarted(v.item) : [];
      case "item.updated":
        return [];
      case "item.completed":
        return isObject(v.item) ? this.itemCompleted(v.item) : [];
      case "turn.completed":
        return [
          { kind: "usage", usage: usageOf(v.usage) },
          { kind: "result", isError: false, message: this.lastMessage, subtype: "success" },
        ];
      case "turn.failed":
        return this.turnFailed(isObject(v.error) ? (str(v.error.message) ?? "turn failed") : "turn failed");
      case "error":
        return this.topLevelError(str(v.message) ?? "error");
      default:
        return [{ kind: "raw", text: line }];
    }
  }

  private topLevelError(message: string): AgentStreamEvent[] {
    if (RETRY_NOTICE.test(message)) return [{ kind: "error", message, fatal: false }];
    this.lastFatal = message;
    return [...this.rateLimit(message), { kind: "error", message, fatal: true }];
  }

  private turnFailed(message: string): AgentStreamEvent[] {
    const result: AgentStreamEvent = { kind: "result", isError: true, message, subtype: "turn.failed" };
    if (message === this.lastFatal) return [result];
    return [...this.rateLimit(message), { kind: "error", message, fatal: true }, result];
  }

  private rateLimit(message: string): AgentStreamEvent[] {
    return RATE_LIMIT.test(message) ? [{ kind: "rate_limit", message }] : [];
  }

  private toolCall(item: Json): AgentStreamEvent | undefined {
    const id = str(item.id) ?? "item";
    switch (item.type) {
      case "command_execution":
        return { kind: "tool_call", id, name: "exec_command", input: { command: str(item.command) ?? "" } };
      case "file_change":
        return { kind: "tool_call", id, name: "apply_patch", input: { changes: item.changes ?? [] } };
      case "mcp_tool_call":
        return { kind: "tool_call", id, name: `${str(item.server) ?? "mcp"}.${str(item.tool) ?? "tool"}`, input: item.arguments ?? {} };
      case "web_search":
        return { kind: "tool_call", id, name: "web_search", input: { query: str(item.query) ?? "" } };
      default:
        return undefined;
    }
  }

  private itemStarted(item: Json): AgentStreamEvent[] {
    const call = this.toolCall(item);
    if (!call) return [];
    this.started.add(str(item.id) ?? "item");
    return [call];
  }

  private itemCompleted(item: Json): AgentStreamEvent[] {
    const id = str(item.id) ?? "item";
    switch (item.type) {
      case "agent_message": {
        const text = str(item.text) ?? "";
        this.lastMessage = text;
        return [{ kind: "text", text }];
      }
      case "reasoning":
        return [{ kind: "thinking", text: str(item.text) ?? "" }];
      case "error":
        return [{ kind: "error", message: str(item.message) ?? "warning", fatal: false }];
      case "todo_list":
        return [{ kind: "system", subtype: "todo_list", message: JSON.stringify(item.items ?? []) }];
      default: {
        const call = this.toolCall(item);
        if (!call || call.kind !== "tool_call") return [];
        const out: AgentStreamEvent[] = this.started.has(id) ? [] : [call];
        this.started.delete(id);
        out.push({ kind: "tool_result", id, name: call.name, output: this.outputOf(item), isError: this.failed(item) });
        return out;
      }
    }
  }

  private outputOf(item: Json): string {
    if (item.type === "command_execution") return str(item.aggregated_output) ?? "";
    if (item.type === "file_change" && Array.isArray(item.changes)) {
      return item.changes.map((c) => (isObject(c) ? `${str(c.kind) ?? "update"} ${str(c.path) ?? ""}` : "")).join("\n");
    }
    if (item.result !== undefined && item.result !== null) return mcpResultText(item.result);
    if (isObject(item.error)) return str(item.error.message) ?? "";
    return "";
  }

  private failed(item: Json): boolean {
    if (item.status === "failed") return true;
    const code = num(item.exit_code);
    return code !== undefined && code !== 0;
  }
}
