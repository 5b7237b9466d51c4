import type { AgentInfo } from "../../../shared/agents";
import { Link } from "../router/Link";
import { trpc } from "../trpc";
import { AgentStatusBadge } from "./AgentStatusBadge";
import { useAgentsLiveRefresh } from "./useAgentsLiveRefresh";

/**
 * The agent's place in its tree: the agent that spawned it (with its own token, e.g. through the
 * MCP `spawn_agent` tool) and the agents it spawned. Nothing when it has neither.
 */
export function AgentFamily({ agent }: { agent: AgentInfo }) {
  const utils = trpc.useUtils();
  const all = trpc.agents.list.useQuery({});
  // its parent's and children's moves (a child spawned, stopped, done) show as they happen
  useAgentsLiveRefresh(() => void utils.agents.list.invalidate(), undefined, 500);
  const agents = all.data?.items ?? [];
  const parent = agent.parentAgentId ? agents.find((x) => x.id === agent.parentAgentId) : undefined;
  const children = agents.filter((x) => x.parentAgentId === agent.id);
  if (!agent.parentAgentId && children.length === 0) return null;
  return (
    <div data-testid="agent-family" className="mt-3 flex flex-wrap items-center gap-x-4 gap-y-2 text-sm text-zinc-600 dark:text-zinc-400">
      {agent.parentAgentId && (
        <span>
          Spawned by{" "}
          <Link href={`/agents/${parent?.alias ?? agent.parentAgentId}`} className="font-medium text-zinc-900 hover:underline dark:text-zinc-100">
            {parent?.alias ?? agent.parentAgentId}
          </Link>
        </span>
      )}
      {children.length > 0 && (
        <span className="flex flex-wrap items-center gap-2">
          <span>Spawned {children.length === 1 ? "1 agent" : `${children.length} agents`}:</span>
          {children.map((c) => (
            <span key={c.id} className="inline-flex items-center gap-1">
              <Link href={`/agents/${c.alias}`} className="font-medium text-zinc-900 hover:underline dark:text-zinc-100">
                {c.alias}
              </Link>
              <AgentStatusBadge status={c.status} needsYou={c.needsYou} />
            </span>
          ))}
        </span>
      )}
    </div>
  );
}
