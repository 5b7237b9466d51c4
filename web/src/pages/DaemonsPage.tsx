import { lazy, Suspense } from "react";
import { DaemonsListPage } from "../daemons/DaemonsListPage";

// The spawn form and the daemon page load on demand, as the runs pages do.
const SpawnDaemonPage = lazy(() => import("../daemons/SpawnDaemonPage"));
const DaemonPage = lazy(() => import("../daemons/DaemonPage"));

/** `/daemons` (the list), `/daemons/new` (spawn one), `/daemons/:id` (one daemon, live). */
export function DaemonsPage({ id }: { id?: string }) {
  if (!id) return <DaemonsListPage />;
  return <Suspense fallback={<PageLoading />}>{id === "new" ? <SpawnDaemonPage /> : <DaemonPage key={id} id={id} />}</Suspense>;
}

function PageLoading() {
  return (
    <div aria-busy="true" aria-label="Loading" className="space-y-3">
      <div className="h-3 w-16 animate-pulse rounded bg-zinc-100 dark:bg-zinc-800" />
      <div className="h-6 w-56 animate-pulse rounded bg-zinc-100 dark:bg-zinc-800" />
    </div>
  );
}
