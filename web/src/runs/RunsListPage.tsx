import { keepPreviousData } from "@tanstack/react-query";
import { useMemo } from "react";
import type { RunSummary, Usage } from "../../../shared/runs";
import type { RunStatus } from "../../../shared/statuses";
import { fieldClass, primaryLinkClass } from "../components/Button";
import { Cmd, EmptyState } from "../components/EmptyState";
import { PlusIcon, RunsIcon, SearchIcon } from "../components/icons";
import { ListFooter } from "../components/ListFooter";
import { PageHeader } from "../components/PageHeader";
import { QueryError } from "../components/QueryError";
import { useDebounced } from "../hooks/useDebounced";
import { useNow } from "../hooks/useNow";
import { useSearchParam } from "../hooks/useSearchParam";
import { errorMessage } from "../lib/errors";
import { describeUsage, elapsedMs, formatDuration, formatRelative, formatTokens, formatUsd } from "../lib/format";
import { navigate } from "../router/history";
import { Link } from "../router/Link";
import { trpc } from "../trpc";
import { RunStatusBadge } from "./RunStatusBadge";
import { useRunsLiveRefresh } from "./useRunsLiveRefresh";

/** A listing row; `usage` when the server sends it (the latest segment's tokens). */
type Row = RunSummary & { usage?: Usage | null };

const FILTERS: Array<{ value: "all" | RunStatus; label: string }> = [
  { value: "all", label: "All" },
  { value: "running", label: "Running" },
  { value: "completed", label: "Completed" },
  { value: "error", label: "Failed" },
  { value: "cancelled", label: "Cancelled" },
];

const NewRunLink = () => (
  <Link href="/runs/new" className={primaryLinkClass}>
    <PlusIcon width={15} height={15} />
    New run
  </Link>
);

/** Rows a page of the list brings (the first one is what a cold load waits for). */
const PAGE = 50;

export function RunsListPage() {
  const utils = trpc.useUtils();
  const [status, setStatus] = useSearchParam("status", "all");
  const [query, setQuery] = useSearchParam("q");
  const q = useDebounced(query.trim(), 250);
  // the filters run on the server: a page is PAGE rows of the filtered list, the next ones on scroll
  const input = { ...(status !== "all" ? { status: [status as RunStatus] } : {}), ...(q ? { q } : {}), limit: PAGE };
  const runs = trpc.runs.list.useInfiniteQuery(input, { getNextPageParam: (page) => page.nextCursor, placeholderData: keepPreviousData });
  // the status filters' counts, without reading the runs
  const counts = trpc.runs.counts.useQuery({}, { placeholderData: keepPreviousData });
  useRunsLiveRefresh(() => {
    void utils.runs.list.invalidate();
    void utils.runs.counts.invalidate();
  });

  const shown: Row[] = useMemo(() => runs.data?.pages.flatMap((p) => p.items) ?? [], [runs.data]);
  const filtered = status !== "all" || q !== "";
  const none = counts.data?.total === 0 && shown.length === 0 && !filtered;
  const chips = useMemo(() => ({ all: counts.data?.total ?? 0, ...counts.data?.byStatus }) as Record<string, number>, [counts.data]);

  return (
    <>
      <PageHeader title="Runs" description="Strategy runs: every step, model call and result, streamed as it happens." actions={none ? undefined : <NewRunLink />} />
      {runs.isPending ? (
        <TableSkeleton />
      ) : runs.isError && !runs.data ? (
        <QueryError title="Cannot load the runs" error={runs.error} onRetry={() => void runs.refetch()} />
      ) : none ? (
        <EmptyState Icon={RunsIcon} title="No runs yet" action={<NewRunLink />}>
          Launch a strategy here, or with <Cmd>yard run &lt;strategy&gt;</Cmd>; it shows up live, and stays for review when it ends.
        </EmptyState>
      ) : (
        <>
          <Filters status={status} setStatus={setStatus} query={query} setQuery={setQuery} counts={chips} />
          {shown.length === 0 && !runs.isPlaceholderData ? (
            <div data-testid="runs-no-match" className="mt-4 rounded-xl border border-dashed border-zinc-300 px-6 py-10 text-center text-sm text-zinc-600 dark:border-zinc-700 dark:text-zinc-400">
              No run matches these filters.{" "}
              <button type="button" onClick={() => (setStatus("all"), setQuery(""))} className="font-medium text-indigo-600 hover:underline dark:text-indigo-400">
                Clear filters
              </button>
            </div>
          ) : (
            <>
              <RunsTable runs={shown} />
              <ListFooter
                shown={shown.length}
                total={q ? undefined : chips[status]}
                noun="runs"
                more={runs.hasNextPage}
                loading={runs.isFetchingNextPage}
                loadMore={() => void runs.fetchNextPage()}
              />
            </>
          )}
          {runs.isError && <p className="mt-2 text-xs text-red-600 dark:text-red-400">Refreshing failed: {errorMessage(runs.error)}. Showing the last known list.</p>}
        </>
      )}
    </>
  );
}

function Filters(props: { status: string; setStatus: (s: string) => void; query: string; setQuery: (q: string) => void; counts: Record<string, number> }) {
  return (
    <div className="mt-6 flex flex-wrap items-center justify-between gap-3">
      <div role="group" aria-label="Filter by status" className="inline-flex flex-wrap rounded-lg border border-zinc-200 bg-zinc-50 p-0.5 dark:border-zinc-800 dark:bg-zinc-900/60">
        {FILTERS.map((f) => (
          <button
            key={f.value}
            type="button"
            aria-pressed={props.status === f.value}
            onClick={() => props.setStatus(f.value)}
            className="rounded-md px-2.5 py-1 text-sm text-zinc-600 hover:text-zinc-900 aria-pressed:bg-white aria-pressed:font-medium aria-pressed:text-zinc-900 aria-pressed:shadow-sm dark:text-zinc-400 dark:hover:text-zinc-100 dark:aria-pressed:bg-zinc-800 dark:aria-pressed:text-zinc-50"
          >
            {f.label}
            <span className="ml-1.5 text-xs text-zinc-400 tabular-nums dark:text-zinc-500">{props.counts[f.value] ?? 0}</span>
          </button>
        ))}
      </div>
      <label className="relative block w-full sm:w-72">
        <span className="sr-only">Search runs by strategy or directory</span>
        <SearchIcon width={15} height={15} className="pointer-events-none absolute top-1/2 left-2.5 -translate-y-1/2 text-zinc-400" />
        <input type="search" value={props.query} onChange={(e) => props.setQuery(e.target.value)} placeholder="Strategy or directory" className={`${fieldClass} pl-8`} />
      </label>
    </div>
  );
}

function RunsTable({ runs }: { runs: Row[] }) {
  const now = useNow(runs.some((r) => r.status === "running"));
  return (
    <div className="mt-4 overflow-x-auto rounded-xl border border-zinc-200 bg-white shadow-sm dark:border-zinc-800 dark:bg-zinc-900/60">
      <table data-testid="runs-table" className="w-full min-w-[44rem] text-left text-sm">
        <thead className="border-b border-zinc-200 text-xs font-medium text-zinc-500 dark:border-zinc-800 dark:text-zinc-400">
          <tr>
            <th scope="col" className="px-4 py-2.5 font-medium">Status</th>
            <th scope="col" className="px-4 py-2.5 font-medium">Strategy</th>
            <th scope="col" className="px-4 py-2.5 font-medium">Directory</th>
            <th scope="col" className="px-4 py-2.5 font-medium">Started</th>
            <th scope="col" className="px-4 py-2.5 text-right font-medium">Duration</th>
            <th scope="col" className="px-4 py-2.5 text-right font-medium">Tokens</th>
            <th scope="col" className="px-4 py-2.5 text-right font-medium">Cost</th>
          </tr>
        </thead>
        <tbody>
          {runs.map((run) => (
            <RunRow key={run.runId} run={run} now={now} />
          ))}
        </tbody>
      </table>
    </div>
  );
}

function RunRow({ run, now }: { run: Row; now: number }) {
  const href = `/runs/${encodeURIComponent(run.runId)}`;
  const ms = elapsedMs(run.startedAt, run.completedAt, now);
  const tokens = run.usage ? run.usage.promptTokens + run.usage.completionTokens : undefined;
  return (
    <tr
      data-testid="run-row"
      data-run-id={run.runId}
      onClick={(e) => {
        if ((e.target as HTMLElement).closest("a")) return;
        navigate(href);
      }}
      className="cursor-pointer border-b border-zinc-100 last:border-b-0 hover:bg-zinc-50 dark:border-zinc-800/70 dark:hover:bg-zinc-800/40"
    >
      <td className="px-4 py-2.5">
        <RunStatusBadge status={run.status} />
      </td>
      <td className="max-w-64 px-4 py-2.5">
        <Link href={href} className="block truncate font-medium text-zinc-900 hover:underline dark:text-zinc-100">
          {run.strategyName}
        </Link>
        <span className="block truncate font-mono text-xs text-zinc-500 dark:text-zinc-400" title={run.strategyPath}>
          {baseName(run.strategyPath)} · {run.runId.slice(0, 8)}
        </span>
      </td>
      <td className="max-w-56 px-4 py-2.5">
        <span className="block truncate font-mono text-xs text-zinc-600 dark:text-zinc-400" title={run.cwd}>
          {shortPath(run.cwd)}
        </span>
      </td>
      <td className="px-4 py-2.5 whitespace-nowrap text-zinc-600 dark:text-zinc-400">
        <time dateTime={run.startedAt} title={new Date(run.startedAt).toLocaleString()}>
          {formatRelative(run.startedAt, now)}
        </time>
      </td>
      <td className="px-4 py-2.5 text-right whitespace-nowrap text-zinc-600 tabular-nums dark:text-zinc-400">{ms === undefined ? "—" : formatDuration(ms)}</td>
      <td className="px-4 py-2.5 text-right whitespace-nowrap text-zinc-600 tabular-nums dark:text-zinc-400" title={run.usage ? describeUsage(run.usage) : "Not reported by the server yet"}>
        {tokens === undefined ? "—" : formatTokens(tokens)}
      </td>
      <td data-testid="run-cost" className="px-4 py-2.5 text-right whitespace-nowrap text-zinc-600 tabular-nums dark:text-zinc-400" title="Latest segment: CLI agents' own cost, other models by the price table (SWITCHYARD_MODEL_PRICES)">
        {run.costUsd === undefined ? "—" : formatUsd(run.costUsd)}
      </td>
    </tr>
  );
}

export function baseName(path: string): string {
  return path.split(/[\\/]/).pop() || path;
}

/** The last three parts of a long path: `…/work/app/src`. */
export function shortPath(path: string): string {
  const parts = path.split(/[\\/]/).filter(Boolean);
  return parts.length > 3 ? `…/${parts.slice(-3).join("/")}` : path;
}

function TableSkeleton() {
  return (
    <div aria-busy="true" aria-label="Loading runs" className="mt-6 space-y-3 rounded-xl border border-zinc-200 p-4 dark:border-zinc-800">
      {[0, 1, 2, 3].map((i) => (
        <div key={i} className="h-5 animate-pulse rounded bg-zinc-100 dark:bg-zinc-800" style={{ width: `${92 - i * 9}%` }} />
      ))}
    </div>
  );
}
