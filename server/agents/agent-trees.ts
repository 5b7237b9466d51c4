import type { AgentGrant, AgentInfo } from "../../shared/agents";
import { DomainError } from "../errors";
import type { AgentsConfig } from "./agent-context";
import { addUsage, type AgentRecords, type AgentRow } from "./agent-records";
import type { AgentViews } from "./agent-views";

/**
 * Agents that spawn agents with their own tokens: the tree's limits (depth, children), an agent's
 * family (what its token may act on) and grants (what else: a child never more than its parent),
 * and a tree's spend (a strategy step's, helpers included).
 */
export class AgentTrees {
  constructor(
    private readonly records: AgentRecords,
    private readonly views: AgentViews,
    private readonly config: Pick<AgentsConfig, "agentMaxDepth" | "agentMaxChildren">,
  ) {}

  /** Refuses a child past the configured depth (AGENT_TREE_TOO_DEEP) or count (AGENT_TOO_MANY_CHILDREN). */
  async checkLimits(parentId: string): Promise<void> {
    const { agentMaxDepth: maxDepth, agentMaxChildren: maxChildren } = this.config;
    const depth = (await this.records.depthOf(parentId)) + 1;
    if (depth > maxDepth) {
      throw new DomainError("AGENT_TREE_TOO_DEEP", `A child of this agent would be at depth ${depth}; agents may nest ${maxDepth} deep (SWITCHYARD_AGENT_MAX_DEPTH)`, { kind: "FORBIDDEN", details: { depth, maxDepth } });
    }
    const children = (await this.records.childrenOf(parentId)).length;
    if (children >= maxChildren) {
      throw new DomainError("AGENT_TOO_MANY_CHILDREN", `This agent has spawned ${children} agents already; one agent may spawn at most ${maxChildren} (SWITCHYARD_AGENT_MAX_CHILDREN)`, { kind: "FORBIDDEN", details: { children, maxChildren } });
    }
  }

  /** Refuses a child a grant its parent does not have (AGENT_FORBIDDEN): a child never gets more than its parent. */
  checkGrants(parent: AgentRow, grants: readonly AgentGrant[]): void {
    const missing = grants.filter((g) => !parent.grants.includes(g));
    if (missing.length === 0) return;
    throw new DomainError("AGENT_FORBIDDEN", `An agent may grant the agents it spawns only what it was granted: ${parent.alias} has no ${missing.join(", ")} grant`, {
      kind: "FORBIDDEN",
      details: { agentId: parent.id, missing },
    });
  }

  /** Whether the agent's token has this grant (given at its spawn); an unknown agent has none. */
  async hasGrant(agentId: string, grant: AgentGrant): Promise<boolean> {
    return (await this.records.find(agentId))?.grants.includes(grant) ?? false;
  }

  /** The agent's own id and those of the agents it spawned. */
  async family(agentId: string): Promise<Set<string>> {
    return new Set([agentId, ...(await this.records.childrenOf(agentId)).map((r) => r.id)]);
  }

  /** The agent's usage plus that of every agent it spawned, and theirs. */
  async usage(agentId: string): Promise<AgentInfo["usage"]> {
    let total = (await this.views.get(agentId)).usage;
    for (const child of await this.records.childrenOf(agentId)) total = addUsage(total, await this.usage(child.id));
    return total;
  }
}
