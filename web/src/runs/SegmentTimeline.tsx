import { useState } from "react";
import { Markdown } from "../components/Markdown";
import { describeUsage, elapsedMs, formatDuration, formatTime, formatTokens } from "../lib/format";
import type { Segment, Steer } from "./run-model";
import { RunStatusBadge } from "./RunStatusBadge";

/** Each start and continuation of the run: its input, how it ended, its result. */
export function SegmentTimeline({ segments, steers, now }: { segments: Segment[]; steers: Steer[]; now: number }) {
  if (segments.length === 0) return null;
  return (
    <section aria-labelledby="timeline-title">
      <h2 id="timeline-title" className="text-sm font-semibold">
        Timeline
      </h2>
      <ol data-testid="segment-timeline" className="mt-3 space-y-0">
        {segments.map((s, i) => (
          <SegmentItem key={s.segment} segment={s} last={i === segments.length - 1} steers={steers.filter((st) => inSegment(st.at, s, segments[i + 1]))} now={now} />
        ))}
      </ol>
    </section>
  );
}

function inSegment(at: string, s: Segment, next: Segment | undefined): boolean {
  return at >= s.startedAt && (!next || at < next.startedAt);
}

const LINE: Record<Segment["status"], string> = {
  running: "bg-indigo-500 ring-indigo-100 dark:ring-indigo-500/20",
  completed: "bg-emerald-500 ring-emerald-100 dark:ring-emerald-500/20",
  error: "bg-red-500 ring-red-100 dark:ring-red-500/20",
  cancelled: "bg-zinc-400 ring-zinc-100 dark:ring-zinc-500/20",
};

function SegmentItem({ segment: s, last, steers, now }: { segment: Segment; last: boolean; steers: Steer[]; now: number }) {
  const ms = elapsedMs(s.startedAt, s.endedAt, now);
  return (
    <li data-testid="segment" data-segment={s.segment} data-status={s.status} className="relative flex gap-4 pb-5 last:pb-0">
      {!last && <span className="absolute top-4 left-[5px] h-full w-px bg-zinc-200 dark:bg-zinc-800" aria-hidden="true" />}
      <span className={`relative mt-1.5 size-[11px] shrink-0 rounded-full ring-4 ${LINE[s.status]}`} aria-hidden="true" />
      <div className="min-w-0 flex-1 rounded-xl border border-zinc-200 bg-white px-4 py-3 shadow-sm dark:border-zinc-800 dark:bg-zinc-900/60">
        <div className="flex flex-wrap items-center gap-x-3 gap-y-1 text-sm">
          <span className="font-medium">{s.continuation ? `Continuation ${s.segment}` : `Start`}</span>
          <RunStatusBadge status={s.status} />
          <span className="text-xs text-zinc-500 tabular-nums dark:text-zinc-400">
            <time dateTime={s.startedAt}>{formatTime(s.startedAt)}</time>
            {ms !== undefined && ` · ${formatDuration(ms)}`}
            {s.usage && (
              <span title={describeUsage(s.usage)}> · {formatTokens(s.usage.promptTokens + s.usage.completionTokens)} tokens</span>
            )}
            {s.modelOverride && <span className="font-mono"> · {s.modelOverride}</span>}
          </span>
        </div>
        <dl className="mt-2 space-y-2 text-sm">
          <div>
            <dt className="text-xs font-medium text-zinc-500 dark:text-zinc-400">Input</dt>
            <dd data-testid="segment-input" className="mt-0.5 whitespace-pre-wrap text-zinc-800 dark:text-zinc-200">
              {s.input || <span className="text-zinc-400 italic">(none)</span>}
            </dd>
          </div>
          {steers.length > 0 && (
            <div>
              <dt className="text-xs font-medium text-zinc-500 dark:text-zinc-400">Steering</dt>
              {steers.map((st) => (
                <dd key={st.id} className="mt-0.5 text-zinc-800 dark:text-zinc-200">
                  “{st.text}” <span className="text-xs text-zinc-500">{st.appliedTo ? `applied to ${st.appliedTo}` : "queued for the next agent call"}</span>
                </dd>
              ))}
            </div>
          )}
          {s.error && (
            <div>
              <dt className="text-xs font-medium text-zinc-500 dark:text-zinc-400">{s.status === "cancelled" ? "Stopped" : "Error"}</dt>
              <dd data-testid="segment-error" className="mt-0.5 text-red-700 dark:text-red-400">
                <code className="mr-1.5 rounded bg-red-50 px-1 text-xs dark:bg-red-400/10">{s.error.code}</code>
                {s.error.message}
              </dd>
            </div>
          )}
          {s.result !== undefined && <Result text={s.result} />}
        </dl>
      </div>
    </li>
  );
}

function Result({ text }: { text: string }) {
  const long = text.length > 1200;
  const [open, setOpen] = useState(!long);
  return (
    <div>
      <dt className="text-xs font-medium text-zinc-500 dark:text-zinc-400">Result</dt>
      <dd data-testid="segment-result" className={`relative mt-0.5 ${open ? "" : "max-h-40 overflow-hidden"}`}>
        <Markdown text={text || "(empty)"} />
        {!open && <div className="absolute inset-x-0 bottom-0 h-12 bg-linear-to-t from-white dark:from-zinc-900" aria-hidden="true" />}
      </dd>
      {long && (
        <button type="button" onClick={() => setOpen((v) => !v)} className="mt-1 text-xs font-medium text-indigo-600 hover:underline dark:text-indigo-400">
          {open ? "Show less" : "Show the whole result"}
        </button>
      )}
    </div>
  );
}
