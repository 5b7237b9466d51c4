import { useEffect, useState } from "react";
import type { AgentOutputLine } from "../../../shared/agents";
import { errorMessage } from "../lib/errors";
import { trpc, type RouterOutputs } from "../trpc";
import { awaitPreloaded, preloaded } from "./preload";

/** The last lines an agent's log opens with (the rich view's first page; the virtual view's first screen). index.html's preload asks for as many. */
export const HEAD_LINES = 300;

export type LogHead =
  | { state: "loaded"; cursor: number; fromLine: number; totalLines: number; lines: AgentOutputLine[] }
  | { state: "error"; message: string };

const loaded = (page: RouterOutputs["agents"]["output"]): LogHead => ({ state: "loaded", cursor: page.lastEventId, fromLine: page.fromLine, totalLines: page.totalLines, lines: page.lines });

/**
 * The start of an agent's log: its last lines and the event cursor read before them (the live
 * stream resumed from it misses nothing between the page and the stream), in one request.
 *
 * Called by the agent page as it mounts, with the id or alias of its URL: the request goes out
 * beside the agent's own, not after it, and alone. A request made as the page's other sections
 * mount would share its HTTP batch with their slow queries (a worktree's changes run git), and a
 * batch answers when its slowest call does. When the browser opened this page, index.html asked
 * for it already (preload.ts): arrived, it is the first render's; on its way, it is awaited.
 * Plain client calls, not the query cache: the log keeps its own lines.
 */
export function useAgentLogHead(agentId: string): LogHead | undefined {
  const utils = trpc.useUtils();
  const [head, setHead] = useState<{ agentId: string; head: LogHead } | undefined>(() => {
    const page = preloaded("log", agentId);
    return page ? { agentId, head: loaded(page) } : undefined;
  });
  const has = head?.agentId === agentId;

  useEffect(() => {
    if (has) return;
    let cancelled = false;
    void (async () => {
      try {
        const page = (await awaitPreloaded("log", agentId)) ?? (await utils.client.agents.output.query({ agentId, limit: HEAD_LINES }));
        if (!cancelled) setHead({ agentId, head: loaded(page) });
      } catch (err) {
        if (!cancelled) setHead({ agentId, head: { state: "error", message: errorMessage(err) } });
      }
    })();
    return () => void (cancelled = true);
  }, [agentId, utils, has]);

  return has ? head.head : undefined;
}
