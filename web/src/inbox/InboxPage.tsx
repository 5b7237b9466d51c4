import { useState } from "react";
import type { InboxItem } from "../../../shared/inbox";
import { Button, fieldClass } from "../components/Button";
import { EmptyState } from "../components/EmptyState";
import { InboxIcon } from "../components/icons";
import { PageHeader } from "../components/PageHeader";
import { errorMessage } from "../lib/errors";
import { Link } from "../router/Link";
import { trpc } from "../trpc";
import { ApprovalForm } from "../agents/ApprovalForm";
import { useInbox } from "./useInbox";

export function InboxPage() {
  const { items, error } = useInbox();
  const decide = trpc.agents.decide.useMutation();
  const approvals = (items ?? []).filter((i) => i.kind === "agent_approval");
  const canNotify = typeof Notification !== "undefined" && Notification.permission === "default";
  return (
    <>
      <PageHeader
        title="Inbox"
        description="Everything waiting for you: agents' questions and tool approvals, agents interrupted by a lost worker, runs' input, questions and permissions."
        actions={
          <div className="flex gap-2">
            {canNotify && <Button onClick={() => void Notification.requestPermission()}>Enable notifications</Button>}
            {approvals.length > 1 && (
              <Button variant="primary" onClick={() => approvals.forEach((a) => decide.mutate({ approvalId: a.id, allow: true }))}>
                Approve all {approvals.length}
              </Button>
            )}
          </div>
        }
      />
      {error && <p role="alert" className="mt-4 text-sm text-red-600">{error}</p>}
      {items === undefined ? (
        <p className="mt-6 text-sm text-zinc-500">Loading…</p>
      ) : items.length === 0 ? (
        <EmptyState Icon={InboxIcon} title="Nothing needs you">
          When an agent asks a question or needs an approval, or a run waits for input, it lands here and waits for you. Nothing is denied on a timeout.
        </EmptyState>
      ) : (
        <ul data-testid="inbox-list" className="mt-6 space-y-3">
          {items.map((item) => (
            <li key={item.id} data-testid="inbox-item" data-kind={item.kind} className="rounded-xl border border-amber-300 bg-white p-4 shadow-sm dark:border-amber-700/50 dark:bg-zinc-900/60">
              <ItemView item={item} />
            </li>
          ))}
        </ul>
      )}
    </>
  );
}

function Who({ item }: { item: InboxItem }) {
  const href = item.kind === "run_request" ? `/runs/${item.runId}` : `/agents/${item.kind === "conversation" ? item.fromAgentId : item.agentId}`;
  const name = item.kind === "run_request" ? `${item.strategyName} · ${item.request.agentName}` : item.alias;
  return (
    <Link href={href} className="text-sm font-semibold text-indigo-700 hover:underline dark:text-indigo-300">
      {name}
    </Link>
  );
}

function ItemView({ item }: { item: InboxItem }) {
  switch (item.kind) {
    case "agent_question":
      return <AgentQuestions item={item} />;
    case "agent_approval":
      return <AgentApproval item={item} />;
    case "agent_interrupted":
      return <AgentInterrupted item={item} />;
    case "run_request":
      return <RunRequest item={item} />;
    case "conversation":
      return <ConversationItem item={item} />;
  }
}

function AgentQuestions({ item }: { item: Extract<InboxItem, { kind: "agent_question" }> }) {
  const [answers, setAnswers] = useState<Record<string, string>>({});
  const resume = trpc.agents.resume.useMutation();
  return (
    <form
      onSubmit={(e) => {
        e.preventDefault();
        resume.mutate({ agentId: item.agentId, answers });
      }}
      className="space-y-2"
    >
      <p className="text-sm"><Who item={item} /> <span className="text-zinc-500">asks</span></p>
      {item.questions.map((q) => (
        <label key={q.id} className="block text-sm text-zinc-800 dark:text-zinc-200">
          {q.question}
          <textarea required rows={2} aria-label={`Answer to ${q.id}`} value={answers[q.id] ?? ""} onChange={(e) => setAnswers({ ...answers, [q.id]: e.target.value })} className={`${fieldClass} mt-1`} />
        </label>
      ))}
      <div className="flex items-center gap-2">
        <Button type="submit" variant="primary" disabled={resume.isPending}>Answer and resume</Button>
        {resume.error && <span role="alert" className="text-sm text-red-600">{errorMessage(resume.error)}</span>}
      </div>
    </form>
  );
}

function AgentApproval({ item }: { item: Extract<InboxItem, { kind: "agent_approval" }> }) {
  return (
    <div className="space-y-2 text-sm">
      <p>
        <Who item={item} /> <span className="text-zinc-500">{item.toolName === "AskUserQuestion" ? "asks" : "wants to use"}</span>
        {item.toolName !== "AskUserQuestion" && <b> {item.toolName}</b>}
      </p>
      <ApprovalForm approval={{ id: item.id, toolName: item.toolName, input: item.input }} />
    </div>
  );
}

function AgentInterrupted({ item }: { item: Extract<InboxItem, { kind: "agent_interrupted" }> }) {
  const resume = trpc.agents.resume.useMutation();
  const stop = trpc.agents.stop.useMutation();
  const error = resume.error ?? stop.error;
  return (
    <div className="space-y-2 text-sm">
      <p>
        <Who item={item} /> <span className="text-zinc-500">was interrupted{item.worker ? ` on worker ${item.worker}` : ""}</span>
      </p>
      <p className="text-zinc-800 dark:text-zinc-200">{item.reason}</p>
      <div className="flex items-center gap-2">
        <Button variant="primary" disabled={resume.isPending || stop.isPending} onClick={() => resume.mutate({ agentId: item.agentId, answers: {} })}>
          {item.worker ? "Resume on another worker" : "Resume"}
        </Button>
        <Button variant="danger" disabled={resume.isPending || stop.isPending} onClick={() => stop.mutate({ agentId: item.agentId })}>
          Stop it
        </Button>
        {error && <span role="alert" className="text-red-600">{errorMessage(error)}</span>}
      </div>
    </div>
  );
}

function RunRequest({ item }: { item: Extract<InboxItem, { kind: "run_request" }> }) {
  const [text, setText] = useState("");
  const respond = trpc.runs.respond.useMutation();
  const r = item.request;
  const send = (payload: { text?: string; decision?: "allow" | "deny" }) => respond.mutate({ runId: item.runId, requestId: r.requestId, ...payload });
  return (
    <div className="space-y-2 text-sm">
      <p><Who item={item} /> <span className="text-zinc-500">{r.kind === "permission" ? "asks permission" : r.kind === "question" ? "asks" : "waits for input"}</span></p>
      <p className="text-zinc-800 dark:text-zinc-200">{r.kind === "input" ? r.prompt : r.kind === "question" ? r.question : `${r.operation} ${r.resource}: ${r.reason}`}</p>
      {r.kind === "permission" ? (
        <div className="flex gap-2">
          <Button variant="primary" onClick={() => send({ decision: "allow" })}>Allow</Button>
          <Button variant="danger" onClick={() => send({ decision: "deny" })}>Deny</Button>
        </div>
      ) : (
        <form
          onSubmit={(e) => {
            e.preventDefault();
            send({ text });
          }}
          className="flex gap-2"
        >
          <input aria-label="Your answer" value={text} onChange={(e) => setText(e.target.value)} className={fieldClass} />
          <Button type="submit" variant="primary">Send</Button>
        </form>
      )}
      {respond.error && <span role="alert" className="text-red-600">{errorMessage(respond.error)}</span>}
    </div>
  );
}

function ConversationItem({ item }: { item: Extract<InboxItem, { kind: "conversation" }> }) {
  const [text, setText] = useState("");
  const answer = trpc.conversations.answer.useMutation();
  return (
    <form
      onSubmit={(e) => {
        e.preventDefault();
        if (text.trim()) answer.mutate({ conversationId: item.id, answer: text });
      }}
      className="space-y-2 text-sm"
    >
      <p><Who item={item} /> <span className="text-zinc-500">asks you</span></p>
      <p className="text-zinc-800 dark:text-zinc-200">{item.question}</p>
      <div className="flex gap-2">
        <input aria-label="Your answer" value={text} onChange={(e) => setText(e.target.value)} className={fieldClass} />
        <Button type="submit" variant="primary" disabled={answer.isPending}>Answer</Button>
      </div>
      {answer.error && <span role="alert" className="text-red-600">{errorMessage(answer.error)}</span>}
    </form>
  );
}
