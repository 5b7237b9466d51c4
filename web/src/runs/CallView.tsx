import { memo, useState, type ReactNode } from "react";
import { ChevronIcon, LockIcon, SteerIcon, ThinkingIcon, ToolIcon } from "../components/icons";
import { Markdown } from "../components/Markdown";
import { describeUsage, formatTokens } from "../lib/format";
import type { AgentCall, RequestEntry } from "./run-model";
import type { CommandItem, StreamItem, ToolItem } from "./stream-items";
import { statusLabel } from "./RunStatusBadge";

/** Beyond this many characters, a text shows its tail (the whole of it is one click away). */
const MAX_SHOWN_CHARS = 60_000;

const CALL_STATUS: Record<AgentCall["status"], string> = {
  running: "text-indigo-600 dark:text-indigo-400",
  waiting: "text-amber-600 dark:text-amber-400",
  completed: "text-emerald-600 dark:text-emerald-400",
  error: "text-red-600 dark:text-red-400",
  cancelled: "text-zinc-500",
};

/** One call of an agent: where it ran, its input, then what it streamed, in order. */
export const CallView = memo(function CallView({ call, requests, showSegment }: { call: AgentCall; requests: Record<string, RequestEntry>; showSegment: boolean }) {
  const streaming = call.open && call.status === "running";
  const lastText = findLastTextIndex(call.items);
  return (
    <article data-testid="agent-call" data-status={call.status} data-step-key={call.stepKey} className="border-t border-zinc-100 px-4 py-3 first:border-t-0 dark:border-zinc-800/70">
      <header className="flex flex-wrap items-center gap-x-2 gap-y-1 text-xs text-zinc-500 dark:text-zinc-400">
        <span className={`font-medium ${CALL_STATUS[call.status]}`}>{statusLabel(call.status)}</span>
        {call.stepKey?.endsWith(".obs") && <span>observer</span>}
        {call.pass !== undefined && <span className="rounded bg-violet-100 px-1.5 py-px font-medium text-violet-700 dark:bg-violet-500/15 dark:text-violet-300">pass {call.pass}</span>}
        {showSegment && <span>segment {call.segment}</span>}
        {call.usage && (
          <span className="ml-auto tabular-nums" title={describeUsage(call.usage)}>
            {formatTokens(call.usage.promptTokens)} in · {formatTokens(call.usage.completionTokens)} out
          </span>
        )}
      </header>
      {call.input !== undefined && call.input !== "" && <Collapsible label="Input" className="mt-2" body={<pre className="max-h-60 overflow-auto font-mono text-xs whitespace-pre-wrap text-zinc-700 dark:text-zinc-300">{call.input}</pre>} />}
      <div className="mt-2 space-y-2">
        {call.items.map((item, i) => (
          <ItemView key={i} item={item} streaming={streaming && i === lastText && i === call.items.length - 1} requests={requests} />
        ))}
        {streaming && call.items.length === 0 && <p className="text-sm text-zinc-400 italic">Waiting for the first token…</p>}
        {call.error && (
          <p data-testid="call-error" className={`text-sm ${call.status === "cancelled" ? "text-zinc-500" : "text-red-700 dark:text-red-400"}`}>
            {call.status === "cancelled" ? "Stopped: " : "Failed: "}
            {call.error}
          </p>
        )}
      </div>
    </article>
  );
});

function findLastTextIndex(items: StreamItem[]): number {
  for (let i = items.length - 1; i >= 0; i--) if (items[i]!.kind === "text") return i;
  return -1;
}

function ItemView({ item, streaming, requests }: { item: StreamItem; streaming: boolean; requests: Record<string, RequestEntry> }) {
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
    case "request":
      return <RequestNote entry={requests[item.requestId]} />;
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
  const status = item.result ? item.result.status : "running";
  const color = status === "error" ? "text-red-600 dark:text-red-400" : status === "completed" ? "text-emerald-600 dark:text-emerald-400" : "text-indigo-600 dark:text-indigo-400";
  return (
    <Collapsible
      testId="tool-call"
      icon={<ToolIcon width={13} height={13} />}
      label={
        <>
          <span className="font-mono font-medium text-zinc-800 dark:text-zinc-200">{item.toolName}</span>
          <span className="min-w-0 truncate font-mono text-zinc-500">{shortArgs(item.args)}</span>
          <span className={`ml-auto shrink-0 ${color}`}>{status === "running" ? "Running…" : statusLabel(status)}</span>
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

function RequestNote({ entry }: { entry: RequestEntry | undefined }) {
  if (!entry) return null;
  const r = entry.request;
  const what = r.kind === "permission" ? `Asked to ${r.operation.replace("fs.", "")} ${r.resource}` : r.kind === "question" ? `Asked: ${r.question}` : `Asked for input${r.prompt ? `: ${r.prompt}` : ""}`;
  const outcome = entry.answer ? (entry.answer.decision ? `${entry.answer.decision} (${entry.answer.source})` : `answered: ${entry.answer.text}`) : entry.closed ? "not answered" : "waiting for you";
  return (
    <p data-testid="request-note" className="flex items-start gap-1.5 rounded-md bg-amber-50 px-2.5 py-1.5 text-xs text-amber-900 dark:bg-amber-400/10 dark:text-amber-200">
      <LockIcon width={13} height={13} className="mt-px shrink-0" />
      <span className="min-w-0 break-words">
        {what} — <span className="font-medium">{outcome}</span>
      </span>
    </p>
  );
}

/** A closed-by-default disclosure (tool calls, thinking, inputs). */
function Collapsible({ label, body, icon, testId, className = "" }: { label: ReactNode; body: ReactNode; icon?: ReactNode; testId?: string; className?: string }) {
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
