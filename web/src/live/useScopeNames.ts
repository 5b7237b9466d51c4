import { useMemo, useRef } from "react";
import type { BusEvent } from "../../../shared/events";
import { trpc } from "../trpc";
import { useLiveEvents } from "./useLiveEvents";
import { useLiveRefresh } from "./useLiveRefresh";

/** Agent id -> alias and daemon id -> name, for labels a person reads (events carry ids). */
export type ScopeNames = { agents: ReadonlyMap<string, string>; daemons: ReadonlyMap<string, string> };

const spawned = (e: BusEvent) => e.type === "agent.spawned" || e.type === "daemon.spawned";

const sameMap = (a: ReadonlyMap<string, string>, b: ReadonlyMap<string, string>) => a.size === b.size && [...a].every(([k, v]) => b.get(k) === v);

/**
 * The names of every agent and daemon: from their lists, and from spawn events newer than the
 * lists. The same object until a name changes, so rows memoized on it do not re-render per event.
 */
export function useScopeNames(): ScopeNames {
  const utils = trpc.useUtils();
  const agents = trpc.agents.list.useQuery({}, { staleTime: 30_000 });
  const daemons = trpc.daemons.list.useQuery(undefined, { staleTime: 30_000 });
  const { events } = useLiveEvents();
  useLiveRefresh(spawned, () => {
    void utils.agents.list.invalidate();
    void utils.daemons.list.invalidate();
  });
  const names = useMemo(() => {
    const agentNames = new Map((agents.data?.items ?? []).map((a) => [a.id, a.alias]));
    const daemonNames = new Map((daemons.data ?? []).map((d) => [d.id, d.name]));
    for (const e of events) {
      if (e.type === "agent.spawned" && e.scope.agentId) agentNames.set(e.scope.agentId, e.payload.alias);
      if (e.type === "daemon.spawned" && e.scope.daemonId) daemonNames.set(e.scope.daemonId, e.payload.name);
    }
    return { agents: agentNames, daemons: daemonNames };
  }, [agents.data, daemons.data, events]);
  const stable = useRef(names);
  if (stable.current !== names && !(sameMap(stable.current.agents, names.agents) && sameMap(stable.current.daemons, names.daemons))) stable.current = names;
  return stable.current;
}
