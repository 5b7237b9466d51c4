import { useState, type ReactNode } from "react";
import { ChevronIcon, SteerIcon, ThinkingIcon, ToolIcon } from "./icons";
import { Markdown } from "./Markdown";
import type { CommandItem, NoteItem, OutputItem, ToolItem, ToolResultItem } from "./output-item";

/**
 * The one renderer of what an agent produced (output-item.ts): the run page's calls (runs/CallView)
 * and the CLI agent log (agents/EventView, a thin adapter from AgentStreamEvent) both draw with it.
 */

/** Beyond this many characters, a text shows its tail (the whole of it is one click away). */
const MAX_SHOWN_CHARS = 60_000;

const NOTE_TONE: Record<NoteItem["tone"], string> = {
  muted: "text-xs text-zinc-500",
  ok: "font-semibold text-emerald-700 dark:text-emerald-400",
  warn: "text-amber-600 dark:text-amber-400",
  error: "text-red-600 dark:text-red-400",
  you: "rounded bg-indigo-50 px-2 py-1 text-indigo-900 dark:bg-indigo-950/50 dark:text-indigo-200",
  raw: "break-all text-zinc-500",
};

export function OutputItemView({ item, streaming = false, request }: { item: OutputItem; streaming?: boolean; request?: (requestId: string) => ReactNode }) {
  switch (item.kind) {
    case "text":
      return <StreamText text={item.text} streaming={streaming} />;
    case "thinking":
      return (
        <Collapsible
          testId="thinking"
          icon={<ThinkingIcon width={13} height={13} />}
          label={item.done ? "Thought" : "Thinking…"}
          body={<p className="text-xs whitespace-pre-wrap text-zinc-600 italic dark:text-zinc-400">{item.text || "…"}</p>}
        />
      );
    case "tool":
      return <ToolView item={item} />;
    case "tool-result":
      return <ToolResultView item={item} />;
    case "request":
      return request?.(item.requestId) ?? null;
    case "command":
      return <CommandNote item={item} />;
    case "steer":
      return (
        <p className="flex items-start gap-1.5 rounded-md bg-sky-50 px-2.5 py-1.5 text-xs text-sky-800 dark:bg-sky-400/10 dark:text-sky-200">
          <SteerIcon width={13} height={13} className="mt-px shrink-0" />
          <span>
            <span className="font-medium">Steered:</span> {item.text}
          </span>
        </p>
      );
    case "note":
      return <p data-testid="output-note" className={`whitespace-pre-wrap ${NOTE_TONE[item.tone]}`}>{item.text}</p>;
  }
}

function StreamText({ text, streaming }: { text: string; streaming: boolean }) {
  const [all, setAll] = useState(false);
  const cut = !all && text.length > MAX_SHOWN_CHARS;
  const shown = cut ? text.slice(text.length - MAX_SHOWN_CHARS) : text;
  return (
    <div data-testid="stream-text">
      {cut && (
        <button type="button" onClick={() => setAll(true)} className="mb-1 text-xs text-indigo-600 hover:underline dark:text-indigo-400">
          Showing the last {MAX_SHOWN_CHARS.toLocaleString()} of {text.length.toLocaleString()} characters; show all
        </button>
      )}
      <Markdown text={shown} streaming={streaming} />
    </div>
  );
}

function ToolView({ item }: { item: ToolItem }) {
  const status = item.result ? item.result.status : item.resultApart ? undefined : "running";
  const color = status === "error" ? "text-red-600 dark:text-red-400" : status === "completed" ? "text-emerald-600 dark:text-emerald-400" : "text-indigo-600 dark:text-indigo-400";
  return (
    <Collapsible
      testId="tool-call"
      icon={<ToolIcon width={13} height={13} />}
      label={
        <>
          <span className="font-mono font-medium text-zinc-800 dark:text-zinc-200">{item.toolName}</span>
          <span className="min-w-0 truncate font-mono text-zinc-500">{shortArgs(item.args)}</span>
          {status && <span className={`ml-auto shrink-0 ${color}`}>{status === "running" ? "Running…" : status === "error" ? "Failed" : "Completed"}</span>}
        </>
      }
      body={
        <div className="space-y-2">
          <Labeled label="Arguments" text={prettyJson(item.args)} />
          {item.result && <Labeled label={item.result.status === "error" ? "Error" : "Result"} text={item.result.error ?? item.result.output} />}
        </div>
      }
    />
  );
}

/** A result on its own line: "← Bash first line of output", the whole output one click away. */
function ToolResultView({ item }: { item: ToolResultItem }) {
  const color = item.isError ? "text-red-600 dark:text-red-400" : "text-emerald-700 dark:text-emerald-400";
  const output = item.output.trim();
  return (
    <details className={`text-xs ${color}`}>
      <summary data-testid="tool-result" className="cursor-pointer">
        {item.isError ? "✗" : "←"} {item.toolName}{" "}
        {output ? <span className="text-zinc-500">{item.output.split("\n")[0]?.slice(0, 120)}</span> : <span className="text-zinc-400 italic">(no output)</span>}
      </summary>
      {output && <pre className="mt-1 max-h-72 overflow-auto font-mono whitespace-pre-wrap text-zinc-600 dark:text-zinc-400">{item.output}</pre>}
    </details>
  );
}

function Labeled({ label, text }: { label: string; text: string }) {
  return (
    <div>
      <div className="mb-0.5 text-[11px] font-medium tracking-wide text-zinc-500 uppercase">{label}</div>
      <pre className="max-h-72 overflow-auto rounded bg-white p-2 font-mono text-xs whitespace-pre-wrap text-zinc-800 ring-1 ring-zinc-200 ring-inset dark:bg-zinc-950 dark:text-zinc-200 dark:ring-zinc-800">{text || "(empty)"}</pre>
    </div>
  );
}

function CommandNote({ item }: { item: CommandItem }) {
  const ended = item.timedOut ? "timed out" : item.exitCode === null ? `killed (${item.signal ?? "signal"})` : `exit ${item.exitCode}`;
  const ok = item.exitCode === 0 && !item.timedOut;
  return (
    <p data-testid="command-ran" data-decision={item.decision} className="flex items-start gap-1.5 rounded-md bg-zinc-50 px-2.5 py-1.5 text-xs text-zinc-700 dark:bg-zinc-400/10 dark:text-zinc-300">
      <ToolIcon width={13} height={13} className="mt-px shrink-0" />
      <span className="min-w-0">
        <span className="font-medium">{item.decision === "policy" ? "Ran without asking:" : "Ran, allowed by you:"}</span> <code className="font-mono break-all">{item.command}</code>
        <span className="text-zinc-500"> in {item.cwd}</span>
        <span className={ok ? "text-emerald-600 dark:text-emerald-400" : "text-red-600 dark:text-red-400"}> · {ended}</span>
        <span className="text-zinc-500"> · {item.durationMs} ms</span>
      </span>
    </p>
  );
}

/** A closed-by-default disclosure (tool calls, thinking, inputs). */
export function Collapsible({ label, body, icon, testId, className = "" }: { label: ReactNode; body: ReactNode; icon?: ReactNode; testId?: string; className?: string }) {
  const [open, setOpen] = useState(false);
  return (
    <div data-testid={testId} data-open={open} className={`rounded-md border border-zinc-200 bg-zinc-50/70 text-xs dark:border-zinc-800 dark:bg-zinc-900/40 ${className}`}>
      <button type="button" aria-expanded={open} onClick={() => setOpen((v) => !v)} className="flex w-full min-w-0 items-center gap-1.5 px-2.5 py-1.5 text-left text-zinc-600 hover:bg-zinc-100/70 dark:text-zinc-400 dark:hover:bg-zinc-800/50">
        <ChevronIcon width={12} height={12} className={`shrink-0 transition-transform ${open ? "rotate-90" : ""}`} />
        {icon && <span className="shrink-0">{icon}</span>}
        {label}
      </button>
      {open && <div className="border-t border-zinc-200 px-2.5 py-2 dark:border-zinc-800">{body}</div>}
    </div>
  );
}

function shortArgs(args: string): string {
  try {
    const parsed: unknown = JSON.parse(args);
    if (parsed && typeof parsed === "object") {
      const parts = Object.entries(parsed).map(([k, v]) => `${k}: ${typeof v === "string" ? v : JSON.stringify(v)}`);
      const text = parts.join(", ");
      return text.length > 80 ? `${text.slice(0, 79)}…` : text;
    }
  } catch {
    // not JSON (yet): show it as it is
  }
  return args.length > 80 ? `${args.slice(0, 79)}…` : args;
}

function prettyJson(args: string): string {
  try {
    return JSON.stringify(JSON.parse(args), null, 2);
  } catch {
    return args;
  }
}
