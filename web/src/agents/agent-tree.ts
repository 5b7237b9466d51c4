/** Agents in tree order: each agent followed by the agents it spawned (and theirs), indented by depth. */
export function treeOrder<T extends { id: string; parentAgentId: string | null }>(agents: readonly T[]): Array<{ agent: T; depth: number }> {
  const ids = new Set(agents.map((a) => a.id));
  const children = new Map<string, T[]>();
  for (const a of agents) {
    if (a.parentAgentId && ids.has(a.parentAgentId)) children.set(a.parentAgentId, [...(children.get(a.parentAgentId) ?? []), a]);
  }
  const out: Array<{ agent: T; depth: number }> = [];
  const seen = new Set<string>();
  const visit = (a: T, depth: number) => {
    if (seen.has(a.id)) return; // a cycle cannot happen, but never loop on one
    seen.add(a.id);
    out.push({ agent: a, depth });
    for (const c of children.get(a.id) ?? []) visit(c, depth + 1);
  };
  // roots: agents no listed agent spawned, in the list's order
  for (const a of agents) if (!a.parentAgentId || !ids.has(a.parentAgentId)) visit(a, 0);
  return out;
}
