import { useEffect } from "react";
import { ConversationStatusBadge } from "../conversations/ConversationStatusBadge";
import { Link } from "../router/Link";
import { trpc } from "../trpc";

/** Threads this agent is part of: who asked whom, the question, the answer, the status. */
export function AgentConversations({ agentId, version }: { agentId: string; version: string }) {
  const list = trpc.conversations.list.useQuery({ agentId }, { refetchInterval: 5000 });
  const agents = trpc.agents.list.useQuery({}, { staleTime: 30_000 });
  const aliases = new Map((agents.data?.items ?? []).map((a) => [a.id, a.alias]));
  const { refetch } = list;
  useEffect(() => void refetch(), [version, refetch]);
  const items = list.data ?? [];
  if (items.length === 0) return null;
  const who = (id: string) => (id === agentId ? "this agent" : id === "human" ? "you" : <Link href={`/agents/${id}`} className="text-indigo-700 hover:underline dark:text-indigo-300">{aliases.get(id) ?? `${id.slice(0, 18)}…`}</Link>);
  return (
    <section data-testid="agent-conversations" className="mt-6">
      <h2 className="text-sm font-semibold text-zinc-800 dark:text-zinc-200">Conversations</h2>
      <ul className="mt-2 space-y-2 text-sm">
        {items.map((c) => (
          <li key={c.id} data-testid="conversation" data-status={c.status} className="rounded-xl border border-zinc-200 p-3 dark:border-zinc-800">
            <p className="flex flex-wrap items-center gap-2 text-xs text-zinc-500">
              <span>
                {who(c.fromAgentId)} asked {who(c.toAgentId)}
              </span>
              <ConversationStatusBadge status={c.status} />
            </p>
            <p className="text-zinc-800 dark:text-zinc-200">Q: {c.question}</p>
            {c.answer && <p className="text-emerald-700 dark:text-emerald-400">A: {c.answer}</p>}
          </li>
        ))}
      </ul>
    </section>
  );
}
