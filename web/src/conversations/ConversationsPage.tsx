import { useState, type FormEvent } from "react";
import type { Conversation } from "../../../shared/conversations";
import { Button, fieldClass } from "../components/Button";
import { Cmd, EmptyState } from "../components/EmptyState";
import { ChatIcon } from "../components/icons";
import { PageHeader } from "../components/PageHeader";
import { QueryError } from "../components/QueryError";
import { useNow } from "../hooks/useNow";
import { useLiveRefresh } from "../live/useLiveRefresh";
import { errorMessage } from "../lib/errors";
import { formatRelative } from "../lib/format";
import { Link } from "../router/Link";
import { trpc } from "../trpc";
import { ConversationStatusBadge } from "./ConversationStatusBadge";

type Filter = "all" | "pending" | "answered";

/** Every question between agents (and to you): who asked whom, the answer, and an answer form for pending ones. */
export function ConversationsPage() {
  const utils = trpc.useUtils();
  const [filter, setFilter] = useState<Filter>("all");
  const list = trpc.conversations.list.useQuery(filter === "all" ? {} : { status: filter });
  const agents = trpc.agents.list.useQuery({});
  useLiveRefresh(
    (e) => e.type.startsWith("conversation.") || e.type === "agent.spawned" || e.type === "agent.deleted",
    () => {
      void utils.conversations.list.invalidate();
      void utils.agents.list.invalidate();
    },
  );
  const now = useNow(true);
  const aliases = new Map((agents.data?.items ?? []).map((a) => [a.id, a.alias]));
  const items = list.data ?? [];
  const pending = items.filter((c) => c.status === "pending").length;
  return (
    <>
      <PageHeader title="Conversations" description="Questions agents ask each other (yard ask) or you, with their answers. Answer any pending one here." />
      <div role="radiogroup" aria-label="Show" className="mt-6 flex gap-1 text-sm">
        {(["all", "pending", "answered"] as const).map((f) => (
          <button
            key={f}
            role="radio"
            aria-checked={filter === f}
            onClick={() => setFilter(f)}
            className="rounded-full border border-zinc-200 px-3 py-1 text-zinc-600 aria-checked:border-indigo-400 aria-checked:bg-indigo-50 aria-checked:text-indigo-800 dark:border-zinc-700 dark:text-zinc-400 dark:aria-checked:bg-indigo-950/50 dark:aria-checked:text-indigo-200"
          >
            {f === "all" ? "All" : f === "pending" ? `Pending${filter === "all" && pending ? ` (${pending})` : ""}` : "Answered"}
          </button>
        ))}
      </div>
      {list.isPending ? (
        <p className="mt-6 text-sm text-zinc-500">Loading conversations…</p>
      ) : list.isError && !list.data ? (
        <QueryError title="Cannot load the conversations" error={list.error} onRetry={() => void list.refetch()} />
      ) : items.length === 0 ? (
        <EmptyState Icon={ChatIcon} title={filter === "all" ? "No conversations yet" : `No ${filter} conversations`}>
          Agents ask each other with <Cmd>yard ask "question" --task-id other-task</Cmd> and answer with <Cmd>yard answer</Cmd>; a question to <b>human</b> shows here and in the Inbox.
        </EmptyState>
      ) : (
        <ul className="mt-4 space-y-3">
          {items.map((c) => <Thread key={c.id} c={c} aliases={aliases} now={now} />)}
        </ul>
      )}
    </>
  );
}

function Party({ id, aliases }: { id: string; aliases: Map<string, string> }) {
  if (id === "human") return <b className="font-medium text-zinc-800 dark:text-zinc-200">you</b>;
  return (
    <Link href={`/agents/${id}`} className="font-medium text-indigo-700 hover:underline dark:text-indigo-300">
      {aliases.get(id) ?? `${id.slice(0, 14)}…`}
    </Link>
  );
}

function Thread({ c, aliases, now }: { c: Conversation; aliases: Map<string, string>; now: number }) {
  const answer = trpc.conversations.answer.useMutation();
  const [text, setText] = useState("");
  const submit = (e: FormEvent) => {
    e.preventDefault();
    if (text.trim()) answer.mutate({ conversationId: c.id, answer: text.trim() });
  };
  const labels = [c.taskId && `task ${c.taskId}`, c.phaseId && `phase ${c.phaseId.slice(0, 12)}`].filter(Boolean).join(" · ");
  return (
    <li data-testid="conversation-thread" data-status={c.status} className="rounded-xl border border-zinc-200 bg-white p-4 shadow-sm dark:border-zinc-800 dark:bg-zinc-900/60">
      <div className="flex flex-wrap items-center justify-between gap-2 text-xs text-zinc-500">
        <span>
          <Party id={c.fromAgentId} aliases={aliases} /> asked <Party id={c.toAgentId} aliases={aliases} />
          {labels && <span className="ml-2">{labels}</span>}
        </span>
        <span className="flex items-center gap-2">
          <ConversationStatusBadge status={c.status} />
          <time dateTime={c.createdAt} title={new Date(c.createdAt).toLocaleString()}>{formatRelative(c.createdAt, now)}</time>
        </span>
      </div>
      <p className="mt-2 whitespace-pre-wrap text-sm text-zinc-900 dark:text-zinc-100">{c.question}</p>
      {c.answer !== null && <p className="mt-2 border-l-2 border-emerald-400 pl-3 text-sm whitespace-pre-wrap text-emerald-800 dark:text-emerald-300">{c.answer}</p>}
      {c.status === "pending" && (
        <form onSubmit={submit} className="mt-3 flex items-start gap-2">
          <label className="flex-1">
            <span className="sr-only">Your answer</span>
            <textarea rows={2} value={text} onChange={(e) => setText(e.target.value)} placeholder={c.toAgentId === "human" ? "Your answer" : "Answer on the agent's behalf"} className={fieldClass} />
          </label>
          <Button type="submit" variant="primary" disabled={answer.isPending || !text.trim()}>Answer</Button>
        </form>
      )}
      {answer.error && <p role="alert" className="mt-2 text-sm text-red-600">{errorMessage(answer.error)}</p>}
    </li>
  );
}
