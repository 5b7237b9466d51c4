import { lazy, Suspense } from "react";
import { RunsListPage } from "../runs/RunsListPage";

// The launch form and the run page (graph, streams, markdown) load on demand: the first page stays small.
const LaunchRunPage = lazy(() => import("../runs/LaunchRunPage"));
const RunPage = lazy(() => import("../runs/RunPage"));

/** `/runs` (the list), `/runs/new` (launch a strategy), `/runs/:id` (one run, live). */
export function RunsPage({ id }: { id?: string }) {
  if (!id) return <RunsListPage />;
  return (
    <Suspense fallback={<PageLoading />}>{id === "new" ? <LaunchRunPage /> : <RunPage key={id} runId={id} />}</Suspense>
  );
}

function PageLoading() {
  return (
    <div aria-busy="true" aria-label="Loading" className="space-y-3">
      <div className="h-3 w-16 animate-pulse rounded bg-zinc-100 dark:bg-zinc-800" />
      <div className="h-6 w-56 animate-pulse rounded bg-zinc-100 dark:bg-zinc-800" />
      <div className="h-4 w-80 max-w-full animate-pulse rounded bg-zinc-100 dark:bg-zinc-800" />
    </div>
  );
}
