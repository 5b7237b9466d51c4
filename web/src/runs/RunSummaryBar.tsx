import type { ReactNode } from "react";
import { describeUsage, elapsedMs, formatDuration, formatTime, formatTokens } from "../lib/format";
import type { LiveStatus, RunInfo } from "./RunPage";
import type { RunView } from "./run-model";
import { totalUsage } from "./run-selectors";
import { RunStatusBadge } from "./RunStatusBadge";

/** Status, segment, start, duration, tokens and model of a run, as a row of small cards. */
export function RunSummaryBar({ info, view, status, waiting, now }: { info: RunInfo; view: RunView; status: LiveStatus; waiting: boolean; now: number }) {
  const segment = view.segments.at(-1);
  const startedAt = segment?.startedAt ?? info.startedAt;
  const endedAt = segment ? segment.endedAt : info.completedAt;
  const ms = elapsedMs(startedAt, endedAt, now);
  const usage = view.calls.length > 0 ? totalUsage(view) : info.usage;
  const tokens = usage.promptTokens + usage.completionTokens;
  const model = segment?.modelOverride ?? info.modelOverride;
  return (
    <dl data-testid="run-summary" className="grid grid-cols-2 gap-3 sm:grid-cols-3 lg:grid-cols-5">
      <Stat label="Status">
        <RunStatusBadge status={waiting && status === "running" ? "waiting" : status} />
      </Stat>
      <Stat label="Segment" testId="run-segment">
        {segment?.segment ?? (info.segment || "—")}
        {segment?.continuation && <span className="ml-1.5 text-xs font-normal text-zinc-500">continued</span>}
      </Stat>
      <Stat label="Started">{startedAt ? <time dateTime={startedAt} title={new Date(startedAt).toLocaleString()}>{formatTime(startedAt).slice(0, 8)}</time> : "—"}</Stat>
      <Stat label="Duration" testId="run-duration">{ms === undefined ? "—" : formatDuration(ms)}</Stat>
      <Stat label="Tokens" testId="run-tokens" title={`${describeUsage(usage)} (all segments)${model ? ` · model override ${model}` : ""}`}>
        {formatTokens(tokens)}
        <span className="ml-1.5 text-xs font-normal text-zinc-500 dark:text-zinc-400">
          {formatTokens(usage.promptTokens)} in · {formatTokens(usage.completionTokens)} out
        </span>
      </Stat>
    </dl>
  );
}

function Stat({ label, children, testId, title }: { label: string; children: ReactNode; testId?: string; title?: string }) {
  return (
    <div title={title} className="min-w-0 rounded-xl border border-zinc-200 bg-white px-4 py-2.5 shadow-sm dark:border-zinc-800 dark:bg-zinc-900/60">
      <dt className="text-xs font-medium text-zinc-500 dark:text-zinc-400">{label}</dt>
      <dd data-testid={testId} className="mt-1 truncate text-base font-semibold tracking-tight tabular-nums">
        {children}
      </dd>
    </div>
  );
}
