import type { ReactNode } from "react";
import { describeUsage, elapsedMs, formatDuration, formatTime, formatTokens } from "../lib/format";
import type { RunView } from "./run-model";
import { totalUsage, type LiveStatus, type RunInfo } from "./run-selectors";
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
      {view.spend?.budget && <BudgetStat spend={view.spend} />}
    </dl>
  );
}

/** Spend of this segment against its budget, as a meter per limit (tokens, USD). */
function BudgetStat({ spend }: { spend: NonNullable<RunView["spend"]> }) {
  const limits = [
    spend.budget?.tokens !== undefined ? { label: `${formatTokens(spend.tokens)} / ${formatTokens(spend.budget.tokens)} tokens`, ratio: spend.tokens / spend.budget.tokens } : null,
    spend.budget?.usd !== undefined ? { label: `$${spend.usd.toFixed(2)} / $${spend.budget.usd.toFixed(2)}`, ratio: spend.usd / spend.budget.usd } : null,
  ].filter((l): l is { label: string; ratio: number } => l !== null);
  return (
    <Stat label="Budget" testId="run-budget" title="This segment's spend against the run's budget; crossing it stops the run (BUDGET_EXCEEDED)">
      {limits.map((l) => (
        <div key={l.label} className="text-sm">
          <span className={l.ratio > 1 ? "text-red-600 dark:text-red-400" : ""}>{l.label}</span>
          <div className="mt-1 h-1.5 w-full rounded-full bg-zinc-200 dark:bg-zinc-800" role="meter" aria-valuemin={0} aria-valuemax={100} aria-valuenow={Math.round(Math.min(1, l.ratio) * 100)} aria-label={l.label}>
            <div className={`h-1.5 rounded-full ${l.ratio > 1 ? "bg-red-500" : l.ratio > 0.8 ? "bg-amber-500" : "bg-emerald-500"}`} style={{ width: `${Math.min(100, Math.round(l.ratio * 100))}%` }} />
          </div>
        </div>
      ))}
    </Stat>
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
