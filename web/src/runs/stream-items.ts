import type { StreamEvent } from "../../../shared/runs";
import type { OutputItem, ToolItem } from "../components/output-item";

/** The items of a strategy call: what its StreamEvents fold into (no separate results, no process notes). */
export type StreamItem = Exclude<OutputItem, { kind: "tool-result" | "note" }>;

/** Append one stream event to a call's items (text merges into the previous text item). */
export function appendStreamItem(items: StreamItem[], event: StreamEvent): StreamItem[] {
  const last = items.at(-1);
  switch (event.type) {
    case "text":
      if (last?.kind === "text") return [...items.slice(0, -1), { kind: "text", text: last.text + event.text }];
      return [...items, { kind: "text", text: event.text }];
    case "thinking-start":
      return [...items, { kind: "thinking", id: event.id, text: "", done: false }];
    case "thinking":
    case "thinking-end": {
      const i = findLastIndex(items, (it) => it.kind === "thinking" && it.id === event.id);
      const delta = event.type === "thinking" ? event.text : "";
      if (i < 0) return [...items, { kind: "thinking", id: event.id, text: delta, done: event.type === "thinking-end" }];
      const item = items[i] as Extract<StreamItem, { kind: "thinking" }>;
      const copy = items.slice();
      copy[i] = { ...item, text: item.text + delta, done: item.done || event.type === "thinking-end" };
      return copy;
    }
    case "tool-call":
      return [...items, { kind: "tool", toolCallId: event.toolCallId, toolName: event.toolName, args: event.args }];
    case "tool-result": {
      const result = { output: event.output, status: event.status, ...(event.error ? { error: event.error } : {}) };
      const i = findLastIndex(items, (it) => it.kind === "tool" && it.toolCallId === event.toolCallId);
      if (i < 0) return [...items, { kind: "tool", toolCallId: event.toolCallId, toolName: event.toolName, args: "", result }];
      const copy = items.slice();
      copy[i] = { ...(items[i] as ToolItem), result };
      return copy;
    }
    default:
      return items;
  }
}

export function findLastIndex<T>(list: readonly T[], predicate: (item: T) => boolean): number {
  for (let i = list.length - 1; i >= 0; i--) if (predicate(list[i]!)) return i;
  return -1;
}
