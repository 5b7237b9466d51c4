import { useEffect, useState } from "react";
import type { AgentOutputLine } from "../../../shared/agents";
import { errorMessage } from "../lib/errors";
import { trpc } from "../trpc";

/** The last lines an agent's log opens with (the rich view's first page; the virtual view's first screen). */
export const HEAD_LINES = 300;

export type LogHead =
  | { state: "loaded"; cursor: number; fromLine: number; totalLines: number; lines: AgentOutputLine[] }
  | { state: "error"; message: string };

/**
 * The start of an agent's log: the event cursor, then the last lines (the cursor is read BEFORE
 * the lines, so the live stream resumed from it misses nothing between the page and the stream).
 *
 * Called by the agent page as it mounts, with the id or alias of its URL: the two requests go out
 * beside the agent's own, not after it, and each one alone. A request made as the page's other
 * sections mount would share its HTTP batch with their slow queries (a worktree's changes run
 * git), and a batch answers when its slowest call does. Plain client calls, not the query cache:
 * the log keeps its own lines.
 */
export function useAgentLogHead(agentId: string): LogHead | undefined {
  const utils = trpc.useUtils();
  const [head, setHead] = useState<{ agentId: string; head: LogHead } | undefined>(undefined);

  useEffect(() => {
    let cancelled = false;
    void (async () => {
      try {
        const info = await utils.client.system.info.query();
        const page = await utils.client.agents.output.query({ agentId, limit: HEAD_LINES });
        if (!cancelled) setHead({ agentId, head: { state: "loaded", cursor: info.lastEventId, fromLine: page.fromLine, totalLines: page.totalLines, lines: page.lines } });
      } catch (err) {
        if (!cancelled) setHead({ agentId, head: { state: "error", message: errorMessage(err) } });
      }
    })();
    return () => void (cancelled = true);
  }, [agentId, utils]);

  return head?.agentId === agentId ? head.head : undefined;
}
