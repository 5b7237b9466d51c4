import { memo, useCallback, useEffect, useLayoutEffect, useRef, useState } from "react";
import { flushSync } from "react-dom";
import type { AgentOutputLine, AgentStreamEvent } from "../../../shared/agents";
import { Button, fieldClass } from "../components/Button";
import { errorMessage } from "../lib/errors";
import { trpc } from "../trpc";
import { EventView } from "./EventView";
import { BLOCK, blockOf, blocksToAsk, LogPages, runsOf } from "./log-pages";
import { toolNamesOf, toolResultLabel } from "./tool-names";

const ROW = 22;
/** Rows rendered past each edge of the view. */
const OVERSCAN = 12;
/** Blocks of lines kept (12,000 lines). */
const MAX_BLOCKS = 60;
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

/** A line's row text, made once per line (a tool call's input can be large) and again when the tool names change. */
const summaries = new WeakMap<AgentOutputLine, { names: number; text: string }>();
function rowText(line: AgentOutputLine, toolNames: ReadonlyMap<string, string>, names: number): string {
  const known = summaries.get(line);
  if (known?.names === names) return known.text;
  const text = summary(line.events, toolNames);
  summaries.set(line, { names, text });
  return text;
}

/** Blocks are fetched ahead of a moving reader: as many lines as it moves in this many frames. */
const AHEAD_FRAMES = 20;
/** A move farther than this many lines is a jump (Start, End, Go to line), not a pace to read ahead at. */
const JUMP = 5_000;
/** After this long without a scroll the reader is at rest (the margin rows come back). */
const REST_MS = 150;

/** The box's scroll position and height; `pace`: lines moved by the last scroll (0 at rest). */
type View = { top: number; height: number; pace: number };

/**
 * A log of any length: fixed-height rows, only the visible ones (plus a margin at rest) in the
 * DOM, blocks of 200 lines fetched as they come near the view and ahead of it in the direction it
 * moves, kept in a small cache (log-pages.ts). It opens on the lines the log opened with (`head`),
 * at its end when following: the first screen needs no request.
 */
export function VirtualLog({ agentId, total, follow, setFollow, head }: { agentId: string; total: number; follow: boolean; setFollow: (f: boolean) => void; head: readonly AgentOutputLine[] }) {
  const utils = trpc.useUtils();
  const box = useRef<HTMLDivElement>(null);
  const [pages] = useState(() => {
    const p = new LogPages(MAX_BLOCKS);
    p.seed(head, total);
    return p;
  });
  /** Tool names by call id, from every block loaded so far (a result's call may be in an earlier one); `names` counts its changes. */
  const [toolNames] = useState(() => toolNamesOf(head));
  const [names, setNames] = useState(toolNames.size);
  /** Counts the blocks that arrived for the rows in the DOM. */
  const [arrived, setArrived] = useState(0);
  const full = total * ROW;
  const spacer = Math.min(full, MAX_PX);
  // the box is 60vh: the first render is already at the end when following (the layout effect below makes it exact)
  const [view, setView] = useState<View>(() => {
    const height = Math.round(window.innerHeight * 0.6);
    return { top: follow ? Math.max(0, spacer - height) : 0, height, pace: 0 };
  });
  const [open, setOpen] = useState<AgentOutputLine | null>(null);
  const [goto, setGoto] = useState("");

  const scale = full > MAX_PX ? (full - view.height) / Math.max(1, spacer - view.height) : 1;
  const virtualTop = view.top * scale;
  // a reader moving a screen or more a frame never sees the margin rows: they are left out
  const overscan = Math.abs(view.pace) * ROW >= view.height ? 0 : OVERSCAN;
  const first = Math.max(0, Math.floor(virtualTop / ROW) - overscan);
  const last = Math.min(total, Math.ceil((virtualTop + view.height) / ROW) + overscan);
  const blockTop = view.top + (first * ROW - virtualTop);
  const latest = useRef({ view, scale, first, last });
  latest.current = { view, scale, first, last };

  const fetchBlocks = useCallback(
    (blocks: number[]) => {
      // asked in one tick: one HTTP request (tRPC batches the calls), a call per run of blocks
      for (const { from, count } of runsOf(blocks)) {
        for (let b = from; b < from + count; b++) pages.asked(b);
        utils.client.agents.output.query({ agentId, fromLine: from * BLOCK, limit: count * BLOCK }).then(
          (r) => {
            const { first: f, last: l } = latest.current;
            for (let b = from; b < from + count; b++) pages.answered(b, r.lines.slice((b - from) * BLOCK, (b - from + 1) * BLOCK), blockOf((f + l) >> 1));
            const known = toolNames.size;
            toolNamesOf(r.lines, toolNames);
            if (toolNames.size !== known) setNames(toolNames.size);
            // rendered again only when the rows in the DOM get lines
            if (from <= blockOf(Math.max(f, l - 1)) && from + count > blockOf(f)) setArrived((n) => n + 1);
          },
          () => {
            for (let b = from; b < from + count; b++) pages.answered(b, undefined, 0);
          },
        );
      }
    },
    [agentId, utils, pages, toolNames],
  );

  // the last block grows while the agent writes: one that ended short is fetched again (also when
  // it arrives short: `arrived`)
  useEffect(() => {
    pages.grew(total);
    const blocks = blockOf(Math.max(0, total - 1)) + 1;
    const { now, later } = blocksToAsk(pages, { firstBlock: blockOf(first), lastBlock: blockOf(Math.max(first, last - 1)), blocks, pace: view.pace, aheadFrames: AHEAD_FRAMES });
    if (now.length > 0) fetchBlocks(now);
    if (later.length === 0) return;
    // marked asked at once; sent a tick later, after tRPC has sent the first batch: a request of
    // its own, so the rows in view do not wait for the lines ahead
    for (const b of later) pages.asked(b);
    let sent = false;
    const timer = setTimeout(() => {
      sent = true;
      fetchBlocks(later);
    });
    return () => {
      if (sent) return;
      clearTimeout(timer);
      for (const b of later) pages.answered(b, undefined, 0);
    };
  }, [first, last, total, view.pace, arrived, pages, fetchBlocks]);

  // before the first paint: at the end when following, and the box's real height
  useLayoutEffect(() => {
    const el = box.current;
    if (!el) return;
    if (follow) el.scrollTop = spacer;
    setView({ top: el.scrollTop, height: el.clientHeight, pace: 0 });
  }, []); // once, on mount

  useEffect(() => {
    if (follow && box.current) box.current.scrollTop = spacer;
  }, [follow, total, spacer]);

  const rest = useRef<ReturnType<typeof setTimeout>>(undefined);
  useEffect(() => () => clearTimeout(rest.current), []);
  const onScroll = (el: HTMLDivElement) => {
    // read before the rows change: no layout is forced here
    const top = el.scrollTop;
    const height = el.clientHeight;
    const atEnd = top + height >= el.scrollHeight - ROW * 2;
    const { view: was, scale: s } = latest.current;
    const moved = ((top - was.top) * s) / ROW;
    // the rows move in this frame, before it is painted (an update left to React's scheduler
    // lands after the paint: a frame of rows scrolled out of view)
    flushSync(() => setView({ top, height, pace: Math.abs(moved) > JUMP ? 0 : moved }));
    if (atEnd !== follow) setFollow(atEnd);
    clearTimeout(rest.current);
    rest.current = setTimeout(() => setView((v) => (v.pace === 0 ? v : { ...v, pace: 0 })), REST_MS);
  };

  const jump = (line: number) => {
    setFollow(false);
    if (box.current) box.current.scrollTop = (Math.max(0, line) * ROW) / scale;
  };

  const rows: number[] = [];
  for (let n = first; n < last; n++) rows.push(n);

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
        onScroll={(e) => onScroll(e.currentTarget)}
        // the rows' layout stays inside the box
        style={{ contain: "strict" }}
        className="relative mt-2 h-[60vh] overflow-y-auto rounded-xl border border-zinc-200 bg-zinc-50 font-mono text-[13px] dark:border-zinc-800 dark:bg-zinc-950"
      >
        <div style={{ height: spacer }} />
        {/* one block moved to the first row: row positions stay exact far down a huge log */}
        <div style={{ position: "absolute", top: 0, left: 0, right: 0, transform: `translateY(${blockTop}px)` }}>
          {/* keyed by position: scrolling gives the rows new lines, it does not replace them */}
          {rows.map((n) => (
            <Row key={n - first} n={n} line={pages.line(n)} toolNames={toolNames} names={names} onOpen={setOpen} />
          ))}
        </div>
      </div>
      {open && (
        <div data-testid="log-line-detail" className="mt-2 rounded-xl border border-zinc-200 bg-white p-3 text-[13px] dark:border-zinc-800 dark:bg-zinc-900">
          <div className="mb-1 flex justify-between text-xs text-zinc-500">
            <span>line {open.line} · session {open.session} · {open.bytes.toLocaleString()} bytes</span>
            <button type="button" onClick={() => setOpen(null)} className="hover:underline">close</button>
          </div>
          {open.events.map((e, i) => <EventView key={i} e={e} toolNames={toolNames} />)}
          <RawLine agentId={agentId} line={open.line} />
        </div>
      )}
    </div>
  );
}

/** One row: rendered again when it shows another line, its line arrives or the tool names change (`names`). */
const Row = memo(function Row({ n, line, toolNames, names, onOpen }: { n: number; line: AgentOutputLine | undefined; toolNames: ReadonlyMap<string, string>; names: number; onOpen: (l: AgentOutputLine) => void }) {
  return (
    <div
      data-testid="agent-log-line"
      data-line={n}
      onClick={() => line && onOpen(line)}
      style={{ height: ROW }}
      className="flex cursor-pointer gap-3 truncate px-3 leading-[22px] hover:bg-zinc-100 dark:hover:bg-zinc-900"
    >
      <span className="w-20 shrink-0 text-right text-zinc-400 tabular-nums">{n}</span>
      <span className="truncate text-zinc-800 dark:text-zinc-200">{line ? rowText(line, toolNames, names) : "…"}</span>
    </div>
  );
});

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
