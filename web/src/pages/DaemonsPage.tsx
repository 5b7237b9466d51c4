import { lazy, Suspense } from "react";
import { PageLoading } from "../components/PageLoading";
import { DaemonsListPage } from "../daemons/DaemonsListPage";

// The spawn form and the daemon page load on demand, as the runs pages do.
const SpawnDaemonPage = lazy(() => import("../daemons/SpawnDaemonPage"));
const DaemonPage = lazy(() => import("../daemons/DaemonPage"));

/** `/daemons` (the list), `/daemons/new` (spawn one), `/daemons/:id` (one daemon, live). */
export function DaemonsPage({ id }: { id?: string }) {
  if (!id) return <DaemonsListPage />;
  return <Suspense fallback={<PageLoading />}>{id === "new" ? <SpawnDaemonPage /> : <DaemonPage key={id} id={id} />}</Suspense>;
}
