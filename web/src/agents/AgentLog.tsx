import { useEffect, useMemo, useRef, useState } from "react";
import type { AgentStreamEvent } from "../../../shared/agents";
import { Button } from "../components/Button";
import { plural } from "../lib/format";
import { useTrackedSubscription } from "../live/useTrackedSubscription";
import { trpc } from "../trpc";
import { toolNamesOf, toolResultLabel } from "./tool-names";
import { HEAD_LINES, type LogHead } from "./useAgentLogHead";
import { VirtualLog } from "./VirtualLog";

const PAGE = HEAD_LINES;
/** Up to this many lines the log is rendered rich (wrapping, expandable); beyond, virtualized rows. */
export const RICH_LIMIT = 1000;

/**
 * An agent's log rendered from normalized events: the last page first (`head`, fetched by the
 * page as it mounts: useAgentLogHead), earlier pages on demand, then live lines from
 * `agents.onOutput` in batches, resumed from the event id taken before the first page (nothing
 * falls between the page and the stream; lines are de-duplicated by number).
 */
export function AgentLog({ agentId, live, head }: { agentId: string; live: boolean; head: LogHead | undefined }) {
  if (head?.state === "loaded") return <LoadedLog agentId={agentId} live={live} head={head} />;
  return (
    <section className="mt-6">
      <h2 className="text-sm font-semibold text-zinc-800 dark:text-zinc-200">Output</h2>
      <div data-testid="agent-log" className="mt-2 rounded-xl border border-zinc-200 bg-zinc-50 p-3 font-mono text-[13px] text-zinc-500 dark:border-zinc-800 dark:bg-zinc-950">
        {head?.state === "error" ? <span role="alert" className="text-red-600 dark:text-red-400">Cannot load the log: {head.message}</span> : "Loading…"}
      </div>
    </section>
  );
}

function LoadedLog({ agentId, live, head }: { agentId: string; live: boolean; head: Extract<LogHead, { state: "loaded" }> }) {
  const utils = trpc.useUtils();
  const [cursor] = useState(head.cursor);
  const [lines, setLines] = useState(() => new Map(head.lines.map((l) => [l.line, l])));
  const [first, setFirst] = useState(head.fromLine);
  const [total, setTotal] = useState(head.totalLines);
  const [raw, setRaw] = useState(false);
  const bottom = useRef<HTMLDivElement>(null);
  const [follow, setFollow] = useState(true);
  const virtual = total > RICH_LIMIT;
  const virtualRef = useRef(virtual);
  virtualRef.current = virtual;

  useTrackedSubscription(trpc.agents.onOutput, { agentId, lastEventId: String(cursor) }, (batch) => {
    const fresh = batch.flatMap((data) => data.lines);
    if (fresh.length === 0) return;
    const end = fresh.reduce((max, l) => Math.max(max, l.line + 1), 0);
    setTotal((t) => Math.max(t, end));
    // the virtual view pages lines from the server: only the count moves here
    if (virtualRef.current) return;
    setLines((prev) => {
      const next = new Map(prev);
      for (const l of fresh) next.set(l.line, l);
      return next;
    });
  });

  const loadEarlier = async () => {
    const from = Math.max(0, first - PAGE);
    const page = await utils.agents.output.fetch({ agentId, fromLine: from, limit: first - from });
    setLines((prev) => new Map([...page.lines.map((l) => [l.line, l] as const), ...prev]));
    setFirst(from);
  };

  const sorted = useMemo(() => [...lines.values()].sort((a, b) => a.line - b.line), [lines]);
  const toolNames = useMemo(() => toolNamesOf(sorted), [sorted]);
  useEffect(() => {
    if (follow) bottom.current?.scrollIntoView({ block: "end" });
  }, [sorted.length, follow]);

  return (
    <section className="mt-6">
      <div className="flex items-center justify-between gap-3">
        <h2 className="text-sm font-semibold text-zinc-800 dark:text-zinc-200">
          Output <span className="font-normal text-zinc-500">{plural(total, "line")}{live ? " · live" : ""}</span>
        </h2>
        <div className="flex items-center gap-2">
          <label className="flex items-center gap-1.5 text-xs text-zinc-600 dark:text-zinc-400">
            <input type="checkbox" checked={follow} onChange={(e) => setFollow(e.target.checked)} /> Follow
          </label>
          {!virtual && <Button variant="ghost" onClick={() => setRaw((r) => !r)}>{raw ? "Rendered" : "Raw JSONL"}</Button>}
        </div>
      </div>
      {virtual ? (
        <VirtualLog agentId={agentId} total={total} follow={follow} setFollow={setFollow} head={sorted} />
      ) : (
      <div data-testid="agent-log" className="mt-2 max-h-[60vh] overflow-y-auto rounded-xl border border-zinc-200 bg-zinc-50 p-3 font-mono text-[13px] leading-relaxed dark:border-zinc-800 dark:bg-zinc-950">
        {first > 0 && (
          <button type="button" onClick={() => void loadEarlier()} className="mb-2 text-xs text-indigo-600 hover:underline dark:text-indigo-400">
            Load {plural(Math.min(PAGE, first), "earlier line")} ({first.toLocaleString()} not shown)
          </button>
        )}
        {sorted.length === 0 && <p className="text-zinc-500">No output yet.</p>}
        {sorted.map((l) => (
          <div key={l.line} data-testid="agent-log-line" data-line={l.line} className="border-b border-zinc-100 py-0.5 last:border-0 dark:border-zinc-900">
            {raw ? <RawLine agentId={agentId} line={l.line} /> : l.events.map((e, i) => <EventView key={i} e={e} toolNames={toolNames} />)}
            {l.truncated && !raw && <span className="text-xs text-amber-600"> (cut: {l.bytes.toLocaleString()} bytes; see raw)</span>}
          </div>
        ))}
        <div ref={bottom} />
      </div>
      )}
    </section>
  );
}

function RawLine({ agentId, line }: { agentId: string; line: number }) {
  const q = trpc.agents.output.useQuery({ agentId, fromLine: line, limit: 1, format: "raw" }, { staleTime: Infinity });
  return <pre className="break-all whitespace-pre-wrap text-zinc-600 dark:text-zinc-400">{q.data?.lines[0]?.raw ?? "…"}</pre>;
}

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
