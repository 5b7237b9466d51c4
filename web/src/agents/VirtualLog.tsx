import { useCallback, useEffect, useMemo, useRef, useState } from "react";
import type { AgentOutputLine, AgentStreamEvent } from "../../../shared/agents";
import { Button, fieldClass } from "../components/Button";
import { errorMessage } from "../lib/errors";
import { trpc } from "../trpc";
import { EventView } from "./AgentLog";
import { toolNamesOf, toolResultLabel } from "./tool-names";

const ROW = 22;
const PAGE = 200;
const OVERSCAN = 40;
const MAX_PAGES = 60;
/**
 * Browsers composite in 32-bit floats: scroll offsets of tens of millions of pixels misplace rows
 * by a pixel or two. Past this height, scroll positions map onto line positions by a scale.
 */
const MAX_PX = 4_000_000;

/** One line of a compact row: the line's events as short text. */
function summary(events: AgentStreamEvent[], toolNames: ReadonlyMap<string, string>): string {
  return events
    .map((e) => {
      switch (e.kind) {
        case "text":
        case "thinking":
        case "raw":
          return e.text;
        case "tool_call":
          return `→ ${e.name} ${JSON.stringify(e.input ?? {}).slice(0, 200)}`;
        case "tool_result":
          return `${e.isError ? "✗" : "←"} ${toolResultLabel(e, toolNames)} ${e.output.trim() ? e.output.slice(0, 200) : "(no output)"}`;
        case "result":
          return `${e.isError ? "✗ failed" : "✓ result"}: ${e.message}`;
        case "error":
          return `${e.fatal ? "error" : "warning"}: ${e.message}`;
        case "system":
          return e.subtype === "user_message" ? `you: ${e.message}` : `${e.subtype}: ${e.message}`;
        case "session":
          return `session ${e.sessionId}`;
        case "usage":
          return `usage ${e.usage.inputTokens} in · ${e.usage.outputTokens} out`;
        case "rate_limit":
          return `rate limited: ${e.message}`;
      }
    })
    .join("  ")
    .slice(0, 400);
}

/**
 * A log of any length: fixed-height rows, only the visible ones (plus a margin) in the DOM, pages
 * of 200 lines fetched from the server as they scroll into view and kept in a small cache.
 */
export function VirtualLog({ agentId, total, follow, setFollow }: { agentId: string; total: number; follow: boolean; setFollow: (f: boolean) => void }) {
  const utils = trpc.useUtils();
  const box = useRef<HTMLDivElement>(null);
  const pages = useRef(new Map<number, AgentOutputLine[]>());
  /** Tool names by call id, from every page loaded so far (a result's call may be on an earlier page). */
  const toolNames = useRef(new Map<string, string>());
  const loading = useRef(new Set<number>());
  const [, setTick] = useState(0);
  const [view, setView] = useState({ top: 0, height: 600 });
  const [open, setOpen] = useState<AgentOutputLine | null>(null);
  const [goto, setGoto] = useState("");

  const full = total * ROW;
  const spacer = Math.min(full, MAX_PX);
  const scale = full > MAX_PX ? (full - view.height) / Math.max(1, spacer - view.height) : 1;
  const virtualTop = view.top * scale;
  const first = Math.max(0, Math.floor(virtualTop / ROW) - OVERSCAN);
  const last = Math.min(total, Math.ceil((virtualTop + view.height) / ROW) + OVERSCAN);
  const blockTop = view.top + (first * ROW - virtualTop);

  const load = useCallback(
    (page: number) => {
      if (pages.current.has(page) || loading.current.has(page)) return;
      loading.current.add(page);
      void utils.agents.output
        .fetch({ agentId, fromLine: page * PAGE, limit: PAGE })
        .then((r) => {
          pages.current.set(page, r.lines);
          toolNamesOf(r.lines, toolNames.current);
          if (pages.current.size > MAX_PAGES) pages.current.delete(pages.current.keys().next().value!);
          setTick((t) => t + 1);
        })
        .finally(() => loading.current.delete(page));
    },
    [agentId, utils],
  );

  // the last page grows while the agent writes: drop it so it is fetched again
  const lastPage = Math.floor(Math.max(0, total - 1) / PAGE);
  useEffect(() => {
    const cached = pages.current.get(lastPage);
    if (cached && cached.length < Math.min(PAGE, total - lastPage * PAGE)) pages.current.delete(lastPage);
  }, [total, lastPage]);

  useEffect(() => {
    for (let p = Math.floor(first / PAGE); p <= Math.floor(Math.max(first, last - 1) / PAGE); p++) load(p);
  }, [first, last, load, total]);

  useEffect(() => {
    const el = box.current;
    if (!el) return;
    setView({ top: el.scrollTop, height: el.clientHeight });
  }, []);

  useEffect(() => {
    if (follow && box.current) box.current.scrollTop = spacer;
  }, [follow, total, spacer]);

  const lineAt = (n: number): AgentOutputLine | undefined => pages.current.get(Math.floor(n / PAGE))?.[n - Math.floor(n / PAGE) * PAGE];
  const rows = useMemo(() => {
    const out: number[] = [];
    for (let n = first; n < last; n++) out.push(n);
    return out;
  }, [first, last]);

  const jump = (line: number) => {
    setFollow(false);
    if (box.current) box.current.scrollTop = (Math.max(0, line) * ROW) / scale;
  };

  return (
    <div>
      <div className="mt-2 flex flex-wrap items-center gap-2">
        <Button variant="ghost" onClick={() => jump(0)}>Start</Button>
        <Button variant="ghost" onClick={() => (setFollow(true), box.current && (box.current.scrollTop = spacer))}>End</Button>
        <form
          onSubmit={(e) => {
            e.preventDefault();
            const n = Number(goto);
            if (Number.isInteger(n) && n >= 0) jump(n);
          }}
          className="flex items-center gap-1"
        >
          <input aria-label="Go to line" value={goto} onChange={(e) => setGoto(e.target.value)} placeholder="line" className={`${fieldClass} w-28 py-1`} inputMode="numeric" />
          <Button type="submit" variant="ghost">Go</Button>
        </form>
      </div>
      <div
        ref={box}
        data-testid="agent-log"
        data-virtual="true"
        onScroll={(e) => {
          const el = e.currentTarget;
          setView({ top: el.scrollTop, height: el.clientHeight });
          const atEnd = el.scrollTop + el.clientHeight >= el.scrollHeight - ROW * 2;
          if (atEnd !== follow) setFollow(atEnd);
        }}
        className="relative mt-2 h-[60vh] overflow-y-auto rounded-xl border border-zinc-200 bg-zinc-50 font-mono text-[13px] dark:border-zinc-800 dark:bg-zinc-950"
      >
        <div style={{ height: spacer }} />
        {/* one block moved to the first row: row positions stay exact far down a huge log */}
        <div style={{ position: "absolute", top: blockTop, left: 0, right: 0 }}>
          {rows.map((n) => {
            const l = lineAt(n);
            return (
              <div
                key={n}
                data-testid="agent-log-line"
                data-line={n}
                onClick={() => l && setOpen(l)}
                style={{ height: ROW }}
                className="flex cursor-pointer gap-3 truncate px-3 leading-[22px] hover:bg-zinc-100 dark:hover:bg-zinc-900"
              >
                <span className="w-20 shrink-0 text-right text-zinc-400 tabular-nums">{n}</span>
                <span className="truncate text-zinc-800 dark:text-zinc-200">{l ? summary(l.events, toolNames.current) : "…"}</span>
              </div>
            );
          })}
        </div>
      </div>
      {open && (
        <div data-testid="log-line-detail" className="mt-2 rounded-xl border border-zinc-200 bg-white p-3 text-[13px] dark:border-zinc-800 dark:bg-zinc-900">
          <div className="mb-1 flex justify-between text-xs text-zinc-500">
            <span>line {open.line} · session {open.session} · {open.bytes.toLocaleString()} bytes</span>
            <button type="button" onClick={() => setOpen(null)} className="hover:underline">close</button>
          </div>
          {open.events.map((e, i) => <EventView key={i} e={e} toolNames={toolNames.current} />)}
          <RawLine agentId={agentId} line={open.line} />
        </div>
      )}
    </div>
  );
}

/** The line as the CLI printed it, fetched only when asked for (a line can be megabytes). */
function RawLine({ agentId, line }: { agentId: string; line: number }) {
  const [shown, setShown] = useState(false);
  const raw = trpc.agents.output.useQuery({ agentId, fromLine: line, limit: 1, format: "raw" }, { enabled: shown });
  const l = raw.data?.lines[0];
  return (
    <div className="mt-2">
      <button type="button" onClick={() => setShown((v) => !v)} aria-expanded={shown} className="text-xs text-indigo-700 hover:underline dark:text-indigo-300">
        {shown ? "Hide raw JSONL" : "Show raw JSONL"}
      </button>
      {shown && (
        <pre data-testid="log-line-raw" className="mt-1 max-h-64 overflow-auto rounded-lg bg-zinc-50 p-2 text-xs break-all whitespace-pre-wrap text-zinc-700 dark:bg-zinc-950 dark:text-zinc-300">
          {raw.isPending ? "Loading…" : raw.isError ? errorMessage(raw.error) : `${l?.raw ?? ""}${l?.truncated ? "\n… (cut: the line is longer)" : ""}`}
        </pre>
      )}
    </div>
  );
}
