import { lazy, Suspense } from "react";
import { PageLoading } from "../components/PageLoading";
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
