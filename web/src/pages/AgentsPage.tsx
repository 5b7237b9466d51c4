import { lazy, Suspense } from "react";
import { AgentPage } from "../agents/AgentPage";
import { AgentsListPage } from "../agents/AgentsListPage";
import { PageLoading } from "../components/PageLoading";

// The spawn form loads on demand, as the runs' and daemons' forms do.
const SpawnAgentPage = lazy(() => import("../agents/SpawnAgentPage"));

/** `/agents` (the list), `/agents/new` (start one), `/agents/:id` (one agent, by id or alias, live). */
export function AgentsPage({ id }: { id?: string }) {
  if (!id) return <AgentsListPage />;
  if (id === "new") {
    return (
      <Suspense fallback={<PageLoading />}>
        <SpawnAgentPage />
      </Suspense>
    );
  }
  return <AgentPage key={id} id={id} />;
}
