import { useEffect, useRef } from "react";
import type { InboxItem } from "../../../shared/inbox";
import { useLiveEvents } from "../live/useLiveEvents";
import { trpc } from "../trpc";

const FINISHED = new Set(["agent.went_idle", "agent.crashed", "run.completed"]);

function notify(title: string, body: string, tag: string): void {
  if (typeof Notification === "undefined" || Notification.permission !== "granted") return;
  try {
    new Notification(title, { body, tag });
  } catch {
    // some browsers only allow notifications from a service worker: the badge still shows it
  }
}

/** Browser notifications (once the user allowed them): new inbox items, finished agents and runs. */
export function Notifier({ items }: { items: InboxItem[] | undefined }) {
  const known = useRef<Set<string> | null>(null);
  useEffect(() => {
    if (!items) return;
    if (known.current) {
      for (const item of items) {
        if (known.current.has(item.id)) continue;
        const who = item.kind === "run_request" ? item.strategyName : item.alias;
        const what =
          item.kind === "agent_question"
            ? item.questions.map((q) => q.question).join(" / ")
            : item.kind === "agent_approval"
              ? `wants to use ${item.toolName}`
              : item.kind === "agent_interrupted"
                ? item.reason
              : item.kind === "conversation"
                ? item.question
                : `needs your ${item.request.kind}`;
        notify(item.kind === "agent_interrupted" ? `${who} was interrupted` : `${who} needs you`, what, item.id);
      }
    }
    known.current = new Set(items.map((i) => i.id));
  }, [items]);

  const { events } = useLiveEvents();
  const utils = trpc.useUtils();
  const seen = useRef<number | null>(null);
  useEffect(() => {
    const newest = events.at(-1)?.id ?? 0;
    const from = seen.current;
    seen.current = newest;
    if (from === null) return;
    for (const e of events) {
      if (e.id <= from || !FINISHED.has(e.type)) continue;
      const title = e.type === "agent.crashed" ? "An agent crashed" : e.type === "run.completed" ? "A run finished" : "An agent finished";
      const agentId = e.scope.agentId;
      const id = agentId ?? e.scope.runId ?? "";
      // an agent by its alias, as everywhere in the dashboard
      if (!agentId) notify(title, id, `${e.type}:${id}`);
      else void utils.agents.get.fetch({ agentId }).then((a) => notify(title, a.alias, `${e.type}:${id}`), () => notify(title, id, `${e.type}:${id}`));
    }
  }, [events, utils]);
  return null;
}
