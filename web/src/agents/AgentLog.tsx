import { useEffect, useMemo, useRef, useState } from "react";
import { Button } from "../components/Button";
import { plural } from "../lib/format";
import { useTrackedSubscription } from "../live/useTrackedSubscription";
import { trpc } from "../trpc";
import { EventView } from "./EventView";
import { toolNamesOf } from "./tool-names";
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
