import type { AgentOutputLine, AgentStreamEvent } from "../../../shared/agents";

/** Tool-call id -> tool name, from the calls among these lines (added to `into`). */
export function toolNamesOf(lines: readonly AgentOutputLine[], into = new Map<string, string>()): Map<string, string> {
  for (const l of lines) for (const e of l.events) if (e.kind === "tool_call") into.set(e.id, e.name);
  return into;
}

/**
 * What a tool result is labelled with: the tool's name (from the parser, else from its call in the
 * log: a parser started after the call, on a resume or a server restart, does not know it), never
 * the call id; "tool" when the call is not in sight.
 */
export function toolResultLabel(e: Extract<AgentStreamEvent, { kind: "tool_result" }>, toolNames?: ReadonlyMap<string, string>): string {
  return e.name ?? toolNames?.get(e.id) ?? "tool";
}
