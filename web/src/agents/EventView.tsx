import type { AgentStreamEvent } from "../../../shared/agents";
import type { OutputItem } from "../components/output-item";
import { OutputItemView } from "../components/OutputItemView";
import { toolResultLabel } from "./tool-names";

/**
 * One parsed CLI agent event as an output item (components/output-item.ts): the thin adapter
 * between the log's `AgentStreamEvent` and the dashboard's one renderer of agent output.
 */
export function outputItemOf(e: AgentStreamEvent, toolNames?: ReadonlyMap<string, string>): OutputItem {
  switch (e.kind) {
    case "text":
      return { kind: "text", text: e.text };
    case "thinking":
      return { kind: "thinking", id: e.messageId ?? "", text: e.text, done: true };
    case "tool_call":
      // the result is a later line of the log, shown there
      return { kind: "tool", toolCallId: e.id, toolName: e.name, args: JSON.stringify(e.input ?? {}), resultApart: true };
    case "tool_result":
      return { kind: "tool-result", toolCallId: e.id, toolName: toolResultLabel(e, toolNames), output: e.output, isError: e.isError };
    case "result":
      return { kind: "note", tone: e.isError ? "error" : "ok", text: `${e.isError ? "✗ failed" : "✓ result"}: ${e.message}` };
    case "error":
      return { kind: "note", tone: e.fatal ? "error" : "warn", text: `${e.fatal ? "error" : "warning"}: ${e.message}` };
    case "rate_limit":
      return { kind: "note", tone: "warn", text: `rate limited: ${e.message}${e.resetsAt ? ` (resets ${new Date(e.resetsAt).toLocaleString()})` : ""}` };
    case "usage":
      return { kind: "note", tone: "muted", text: `usage: ${e.usage.inputTokens} in · ${e.usage.outputTokens} out${e.usage.costUsd !== undefined ? ` · $${e.usage.costUsd.toFixed(4)}` : ""}` };
    case "session":
      return { kind: "note", tone: "muted", text: `session ${e.sessionId}${e.model ? ` · ${e.model}` : ""}` };
    case "system":
      return e.subtype === "user_message" ? { kind: "note", tone: "you", text: `you: ${e.message}` } : { kind: "note", tone: "muted", text: `${e.subtype}: ${e.message}` };
    case "raw":
      return { kind: "note", tone: "raw", text: e.text };
  }
}

/** One normalized agent event, as the log (AgentLog, VirtualLog) shows it: through OutputItemView. */
export function EventView({ e, toolNames }: { e: AgentStreamEvent; toolNames?: ReadonlyMap<string, string> }) {
  return <OutputItemView item={outputItemOf(e, toolNames)} />;
}
