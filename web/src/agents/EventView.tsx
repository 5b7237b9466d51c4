import type { AgentStreamEvent } from "../../../shared/agents";
import { toolResultLabel } from "./tool-names";

/** One normalized agent event, as the log (AgentLog, VirtualLog) shows it. */
export function EventView({ e, toolNames }: { e: AgentStreamEvent; toolNames?: ReadonlyMap<string, string> }) {
  switch (e.kind) {
    case "text":
      return <p className="whitespace-pre-wrap text-zinc-900 dark:text-zinc-100">{e.text}</p>;
    case "thinking":
      return (
        <details className="text-zinc-500">
          <summary className="cursor-pointer text-xs">thinking</summary>
          <p className="whitespace-pre-wrap">{e.text}</p>
        </details>
      );
    case "tool_call":
      return (
        <details data-testid="tool-call" className="text-sky-700 dark:text-sky-300">
          <summary className="cursor-pointer">→ {e.name} <span className="text-zinc-500">{summaryOf(e.input)}</span></summary>
          <pre className="whitespace-pre-wrap text-zinc-600 dark:text-zinc-400">{JSON.stringify(e.input, null, 2)}</pre>
        </details>
      );
    case "tool_result":
      return (
        <details className={e.isError ? "text-red-600 dark:text-red-400" : "text-emerald-700 dark:text-emerald-400"}>
          <summary data-testid="tool-result" className="cursor-pointer">
            {e.isError ? "✗" : "←"} {toolResultLabel(e, toolNames)}{" "}
            {e.output.trim() ? <span className="text-zinc-500">{e.output.split("\n")[0]?.slice(0, 120)}</span> : <span className="text-zinc-400 italic">(no output)</span>}
          </summary>
          {e.output.trim() && <pre className="whitespace-pre-wrap text-zinc-600 dark:text-zinc-400">{e.output}</pre>}
        </details>
      );
    case "result":
      return <p className={`font-semibold ${e.isError ? "text-red-600 dark:text-red-400" : "text-emerald-700 dark:text-emerald-400"}`}>{e.isError ? "✗ failed" : "✓ result"}: {e.message}</p>;
    case "error":
      return <p className={e.fatal ? "text-red-600 dark:text-red-400" : "text-amber-600 dark:text-amber-400"}>{e.fatal ? "error" : "warning"}: {e.message}</p>;
    case "rate_limit":
      return <p className="text-amber-600">rate limited: {e.message}{e.resetsAt ? ` (resets ${new Date(e.resetsAt).toLocaleString()})` : ""}</p>;
    case "usage":
      return <p className="text-xs text-zinc-500">usage: {e.usage.inputTokens} in · {e.usage.outputTokens} out{e.usage.costUsd !== undefined ? ` · $${e.usage.costUsd.toFixed(4)}` : ""}</p>;
    case "session":
      return <p className="text-xs text-zinc-500">session {e.sessionId}{e.model ? ` · ${e.model}` : ""}</p>;
    case "system":
      return <p className={e.subtype === "user_message" ? "rounded bg-indigo-50 px-2 py-1 whitespace-pre-wrap text-indigo-900 dark:bg-indigo-950/50 dark:text-indigo-200" : "text-xs text-zinc-500"}>{e.subtype === "user_message" ? `you: ${e.message}` : `${e.subtype}: ${e.message}`}</p>;
    case "raw":
      return <p className="break-all whitespace-pre-wrap text-zinc-500">{e.text}</p>;
  }
}

function summaryOf(input: unknown): string {
  if (input && typeof input === "object") {
    const v = input as Record<string, unknown>;
    const pick = v.command ?? v.file_path ?? v.path ?? v.pattern;
    if (typeof pick === "string") return pick.slice(0, 120);
  }
  return "";
}
