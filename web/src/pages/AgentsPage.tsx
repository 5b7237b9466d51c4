import { EmptyState } from "../components/EmptyState";
import { AgentsIcon } from "../components/icons";
import { PageHeader } from "../components/PageHeader";
import { Link } from "../router/Link";

export function AgentsPage({ id }: { id?: string }) {
  return (
    <>
      <PageHeader
        title={id ? `Agent ${id}` : "Agents"}
        crumbs={id ? <Link href="/agents" className="hover:underline">Agents</Link> : undefined}
        description="Coding agents (Claude Code, Codex, …): their output, tool calls and status, live."
      />
      <EmptyState Icon={AgentsIcon} title={id ? "This agent is not here yet" : "No agents yet"}>
        Agents started by you or by a run appear here with their live output, and you can steer or stop them.
      </EmptyState>
    </>
  );
}
