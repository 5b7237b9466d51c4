import { useLiveRefresh } from "../live/useLiveRefresh";

/** Refresh on agent lifecycle events (not output), of one agent when `agentId` is given. */
export function useAgentsLiveRefresh(refresh: () => void, agentId?: string, throttleMs = 250): void {
  useLiveRefresh(
    (e) => (e.type.startsWith("agent.") || e.type.startsWith("worktree.")) && e.type !== "agent.output_produced" && (!agentId || e.scope.agentId === agentId),
    refresh,
    throttleMs,
  );
}
