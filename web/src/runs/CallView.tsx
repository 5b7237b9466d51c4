import { memo } from "react";
import { LockIcon } from "../components/icons";
import { Collapsible, OutputItemView } from "../components/OutputItemView";
import { describeUsage, formatTokens } from "../lib/format";
import type { AgentCall, RequestEntry } from "./run-model";
import type { StreamItem } from "./stream-items";
import { statusLabel } from "./RunStatusBadge";

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
          <OutputItemView key={i} item={item} streaming={streaming && i === lastText && i === call.items.length - 1} request={(id) => <RequestNote entry={requests[id]} />} />
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

