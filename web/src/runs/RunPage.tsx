import { useCallback, useEffect, useMemo, useState } from "react";
import { Cmd } from "../components/EmptyState";
import { RunsIcon } from "../components/icons";
import { EntityNotFound } from "../components/NotFound";
import { PageHeader } from "../components/PageHeader";
import { QueryError } from "../components/QueryError";
import { useNow } from "../hooks/useNow";
import { isNotFound } from "../lib/errors";
import { Link } from "../router/Link";
import { trpc } from "../trpc";
import { AgentStreams } from "./AgentStreams";
import { FlowGraph } from "./FlowGraph";
import { cycleLimitsOf } from "./flow-tree";
import { ContinueForm, SteerForm, StartForm, StopButton } from "./RunControls";
import { RunSummaryBar } from "./RunSummaryBar";
import { RequestsPanel } from "./RequestsPanel";
import type { RunView } from "./run-model";
import { openRequests, type LiveStatus, type RunInfo } from "./run-selectors";
import { SegmentTimeline } from "./SegmentTimeline";
import { useRunView, type RunViewState } from "./useRunView";

/** `/runs/:id`: the run's header and controls, its flow graph live, every agent's stream, its segments. */
export default function RunPage({ runId }: { runId: string }) {
  const run = trpc.runs.get.useQuery({ runId });
  const live = useRunView(runId);
  useRefreshInfo(runId, live.view);

  if (run.isPending) return <RunSkeleton runId={runId} />;
  if (run.isError && !run.data) {
    if (isNotFound(run.error)) {
      return (
        <EntityNotFound kind="run" id={runId} list={{ href: "/runs", label: "Runs" }} Icon={RunsIcon}>
          No run with id <Cmd>{runId}</Cmd> has been recorded on this server.
        </EntityNotFound>
      );
    }
    return (
      <>
        <PageHeader title={`Run ${runId}`} crumbs={<Link href="/runs" className="hover:underline">Runs</Link>} description="A strategy run." />
        <QueryError title="Cannot load this run" error={run.error} onRetry={() => void run.refetch()} />
      </>
    );
  }
  return <RunDetail info={run.data} live={live} />;
}

/** Re-read the run's row when a segment starts or ends (status, usage, completedAt). */
function useRefreshInfo(runId: string, view: RunView) {
  const utils = trpc.useUtils();
  const last = view.segments.at(-1);
  const key = `${view.segments.length}:${last?.status ?? ""}`;
  useEffect(() => {
    if (key !== "0:") void utils.runs.get.invalidate({ runId });
  }, [key, runId, utils]);
}

function RunDetail({ info, live }: { info: RunInfo; live: RunViewState }) {
  const { view } = live;
  const [selected, setSelected] = useState<string | undefined>();
  const segment = view.segments.at(-1);
  const requests = useMemo(() => openRequests(view), [view]);
  // The events are newer than the row: trust them once a segment has been seen.
  const status: LiveStatus = segment ? segment.status : info.status;
  const running = status === "running";
  const now = useNow(running);
  const limits = useMemo(() => cycleLimitsOf(info.flowTree), [info.flowTree]);
  const order = useMemo(() => agentOrder(info), [info]);

  const selectAgent = useCallback((agent: string | undefined) => {
    setSelected((current) => (agent === undefined || current === agent ? undefined : agent));
    if (agent) window.requestAnimationFrame(() => document.getElementById("agent-streams")?.scrollIntoView({ behavior: "smooth", block: "start" }));
  }, []);

  return (
    <div data-testid="run-page" data-run-id={info.runId} data-status={status} className="space-y-6">
      <PageHeader
        title={info.strategyName}
        crumbs={<Link href="/runs" className="hover:underline">Runs</Link>}
        description={
          <span className="font-mono text-xs" title={info.strategyPath}>
            run {info.runId} · {info.cwd}
          </span>
        }
        actions={running ? <StopButton runId={info.runId} /> : <RunAgainLink info={info} />}
      />
      <RunSummaryBar info={info} view={view} status={status} waiting={requests.length > 0} now={now} />
      <ConnectionNote live={live} />
      <RequestsPanel runId={info.runId} requests={requests} />
      {info.graph && (
        <section aria-labelledby="flow-title" className="rounded-xl border border-zinc-200 bg-white p-4 shadow-sm dark:border-zinc-800 dark:bg-zinc-900/60">
          <div className="mb-2 flex items-baseline justify-between gap-3">
            <h2 id="flow-title" className="text-sm font-semibold">
              Flow
            </h2>
            <p className="text-xs text-zinc-500 dark:text-zinc-400">Click an agent to see its stream.</p>
          </div>
          <FlowGraph graph={info.graph} statuses={view.nodes} passes={view.passes} limits={limits} selectedAgent={selected} onSelectAgent={selectAgent} label={`Flow of ${info.strategyName}`} cliAgents={view.cliAgents} />
        </section>
      )}
      {view.warnings.length > 0 && <Warnings warnings={view.warnings} />}
      <Controls runId={info.runId} status={status} />
      <AgentStreams view={view} order={order} selected={selected} onSelect={selectAgent} loading={!live.received && status !== "pending"} />
      <SegmentTimeline segments={view.segments} steers={view.steers} now={now} />
    </div>
  );
}

function Controls({ runId, status }: { runId: string; status: LiveStatus }) {
  return (
    <div className="rounded-xl border border-zinc-200 bg-zinc-50/60 p-4 dark:border-zinc-800 dark:bg-zinc-900/30">
      {status === "running" ? <SteerForm runId={runId} /> : status === "pending" ? <StartForm runId={runId} /> : <ContinueForm runId={runId} />}
    </div>
  );
}

/** Agents in the order the flow graph lists them (then the strategy's other agents). */
function agentOrder(info: RunInfo): string[] {
  const fromGraph = (info.graph?.nodes ?? []).flatMap((n) => (n.agent ? [n.agent] : []));
  return [...new Set([...fromGraph, ...info.agents])];
}

function RunAgainLink({ info }: { info: RunInfo }) {
  const params = new URLSearchParams({ strategy: info.strategyPath, cwd: info.cwd });
  return (
    <Link href={`/runs/new?${params.toString()}`} className="rounded-md border border-zinc-300 bg-white px-3 py-1.5 text-sm font-medium text-zinc-800 shadow-sm hover:bg-zinc-50 dark:border-zinc-700 dark:bg-zinc-900 dark:text-zinc-100 dark:hover:bg-zinc-800">
      Run again
    </Link>
  );
}

/** The run's own stream: say so when it is not live (the shell's indicator covers the rest). */
function ConnectionNote({ live }: { live: RunViewState }) {
  const [wasLive, setWasLive] = useState(false);
  if (live.status === "pending" && !wasLive) setWasLive(true);
  if (live.status === "pending" || live.status === "idle") return null;
  if (live.status === "connecting" && !wasLive) return null; // the first connect: no note (no layout jump)
  const text =
    live.status === "error"
      ? `The run's live stream failed${live.error ? ` (${live.error})` : ""}; retrying. What is shown may be behind.`
      : "The run's live stream dropped; reconnecting and catching up on what was missed…";
  return (
    <p role="status" data-testid="run-stream-state" data-state={live.status} className="rounded-lg bg-amber-50 px-3 py-2 text-sm text-amber-900 dark:bg-amber-400/10 dark:text-amber-200">
      {text}
    </p>
  );
}

function Warnings({ warnings }: { warnings: RunView["warnings"] }) {
  return (
    <ul data-testid="run-warnings" className="space-y-1 rounded-xl border border-amber-200 bg-amber-50 px-4 py-3 text-sm text-amber-900 dark:border-amber-900/60 dark:bg-amber-950/30 dark:text-amber-200">
      {warnings.map((w, i) => (
        <li key={i}>
          {w.path && <code className="mr-1.5">{w.path}</code>}
          {w.message}
        </li>
      ))}
    </ul>
  );
}

function RunSkeleton({ runId }: { runId: string }) {
  return (
    <div aria-busy="true" aria-label={`Loading run ${runId}`} className="space-y-6">
      <div className="space-y-2 border-b border-zinc-200 pb-5 dark:border-zinc-800">
        <div className="h-3 w-16 animate-pulse rounded bg-zinc-100 dark:bg-zinc-800" />
        <div className="h-6 w-64 animate-pulse rounded bg-zinc-100 dark:bg-zinc-800" />
        <div className="h-4 w-96 max-w-full animate-pulse rounded bg-zinc-100 dark:bg-zinc-800" />
      </div>
      <div className="grid grid-cols-2 gap-3 lg:grid-cols-5">
        {[0, 1, 2, 3, 4].map((i) => (
          <div key={i} className="h-16 animate-pulse rounded-xl bg-zinc-100 dark:bg-zinc-800" />
        ))}
      </div>
      <div className="h-48 animate-pulse rounded-xl bg-zinc-100 dark:bg-zinc-800" />
    </div>
  );
}
