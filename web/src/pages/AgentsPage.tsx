import { AgentPage } from "../agents/AgentPage";
import { AgentsListPage } from "../agents/AgentsListPage";

export function AgentsPage({ id }: { id?: string }) {
  return id ? <AgentPage id={id} /> : <AgentsListPage />;
}
