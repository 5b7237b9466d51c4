import { useEffect, useState, type FormEvent } from "react";
import type { AgentInfo } from "../../../shared/agents";
import { Button, fieldClass } from "../components/Button";
import { Cmd } from "../components/EmptyState";
import { AgentsIcon } from "../components/icons";
import { EntityNotFound } from "../components/NotFound";
import { PageHeader } from "../components/PageHeader";
import { QueryError } from "../components/QueryError";
import { errorMessage, isNotFound } from "../lib/errors";
import { navigate } from "../router/history";
import { Link } from "../router/Link";
import { trpc } from "../trpc";
import { AgentChanges } from "./AgentChanges";
import { AgentConversations } from "./AgentConversations";
import { AgentFamily } from "./AgentFamily";
import { AgentLog } from "./AgentLog";
import { ApprovalForm } from "./ApprovalForm";
import { MergedBadge } from "./MergedBadge";
import { AgentStatusBadge } from "./AgentStatusBadge";
import { preloadState, type PreloadState } from "./preload";
import { useAgentLogHead } from "./useAgentLogHead";
import { useAgentsLiveRefresh } from "./useAgentsLiveRefresh";

const LIVE = new Set(["starting", "running"]);

export function AgentPage({ id }: { id: string }) {
  const utils = trpc.useUtils();
  // opened in the browser: index.html asked for the agent already; its answer is the first render's
  // (the page asks itself only once it has settled without data: one request either way)
  const pre = usePreloadState("agent", id);
  const agent = trpc.agents.get.useQuery({ agentId: id }, { initialData: pre.state === "data" ? pre.data : undefined, enabled: pre.state !== "pending" && pre.state !== "not_found" });
  const approvals = trpc.agents.approvals.useQuery({ agentId: id, status: "pending" });
  // asked now, beside the agent itself: the log's first screen does not wait for the page around it
  const logHead = useAgentLogHead(id);
  // `id` may be the alias (/agents/<alias>): events carry the canonical id
  useAgentsLiveRefresh(() => {
    void utils.agents.get.invalidate({ agentId: id });
    void utils.agents.approvals.invalidate();
  }, agent.data?.id ?? id);
  const crumbs = <Link href="/agents" className="hover:underline">Agents</Link>;
  if (agent.isPending && pre.state !== "not_found") return <PageHeader title="Agent" crumbs={crumbs} description="" />;
  // a failed refresh (the server restarting) keeps the page as it was: only no data at all is an error
  if (!agent.data) {
    if (pre.state === "not_found" || isNotFound(agent.error)) {
      return (
        <EntityNotFound kind="agent" id={id} list={{ href: "/agents", label: "Agents" }} Icon={AgentsIcon}>
          No agent has the id or alias <Cmd>{id}</Cmd>.
        </EntityNotFound>
      );
    }
    return (
      <>
        <PageHeader title="Agent" crumbs={crumbs} description="" />
        <QueryError title="Cannot load this agent" error={agent.error} onRetry={() => void agent.refetch()} />
      </>
    );
  }
  const a = agent.data;
  return (
    <>
      <PageHeader title={a.alias} crumbs={crumbs} description={`${a.provider} · ${a.mode} · ${a.permissionMode}`} actions={<Actions agent={a} />} />
      {agent.isError && <p className="mt-2 text-xs text-red-600 dark:text-red-400">Refreshing failed; showing the last known state.</p>}
      <div className="mt-4 flex flex-wrap items-center gap-3 text-sm text-zinc-600 dark:text-zinc-400">
        <AgentStatusBadge status={a.status} needsYou={a.needsYou} />
        {a.statusReason && <span data-testid="agent-reason">{a.statusReason}</span>}
        <span className="font-mono text-xs">{a.branch ?? a.workspacePath}</span>
        {a.worker && (
          <span data-testid="agent-worker" className="text-xs">
            on worker <Link href="/workers" className="font-medium text-indigo-700 hover:underline dark:text-indigo-300">{a.worker}</Link>
          </span>
        )}
        {a.merge && <MergedBadge merge={a.merge} now={Date.now()} />}
        {a.workspaceRemoved && <span data-testid="worktree-cleaned" className="text-xs text-zinc-500" title="Removed once the agent finished clean (its branch is kept when it has commits); a follow-up message brings it back">worktree cleaned up</span>}
        {a.accountLabel && <span className="text-xs">account {a.accountLabel}</span>}
        <span className="text-xs">session {a.sessionNumber}</span>
        <span className="text-xs tabular-nums">{a.usage.inputTokens.toLocaleString()} in · {a.usage.outputTokens.toLocaleString()} out{a.usage.costUsd !== undefined ? ` · $${a.usage.costUsd.toFixed(4)}` : ""}</span>
      </div>
      <AgentFamily agent={a} />
      <details className="mt-3 text-sm">
        <summary className="cursor-pointer text-zinc-600 dark:text-zinc-400">Task</summary>
        <p className="mt-1 whitespace-pre-wrap text-zinc-800 dark:text-zinc-200">{a.task}</p>
      </details>
      {a.result && (
        <div data-testid="agent-result" className="mt-4 rounded-xl border border-emerald-200 bg-emerald-50 p-3 text-sm text-emerald-900 dark:border-emerald-900/60 dark:bg-emerald-950/40 dark:text-emerald-200">
          <b>Result:</b> {a.result}
        </div>
      )}
      {a.cleanupWarning && (
        <div role="status" data-testid="cleanup-warning" className="mt-4 rounded-xl border border-amber-300 bg-amber-50 p-3 text-sm text-amber-900 dark:border-amber-700/60 dark:bg-amber-950/30 dark:text-amber-200">
          <b>Uncommitted work kept.</b> {a.cleanupWarning}
        </div>
      )}
      {a.status === "waiting_for_account" && (
        <div role="status" className="mt-4 rounded-xl border border-sky-300 bg-sky-50 p-3 text-sm text-sky-900 dark:border-sky-800 dark:bg-sky-950/30 dark:text-sky-200">
          <b>Waiting for an account.</b> It resumes by itself as soon as one is free. <Link href="/accounts" className="underline">Accounts</Link>
        </div>
      )}
      {a.status === "waiting_for_input" && <QuestionsForm agent={a} />}
      {(approvals.data ?? []).map((ap) => <ApprovalCard key={ap.id} approval={ap} />)}
      <MessageForm agent={a} />
      {a.workspaceKind === "worktree" && <AgentChanges agentId={a.id} live={LIVE.has(a.status)} version={a.updatedAt} worktreeRemoved={a.workspaceRemoved} merge={a.merge} />}
      <AgentConversations agentId={a.id} version={a.updatedAt} />
      <AgentLog agentId={a.id} live={LIVE.has(a.status)} head={logHead} />
    </>
  );
}

function Actions({ agent }: { agent: AgentInfo }) {
  const stop = trpc.agents.stop.useMutation();
  const all = trpc.agents.list.useQuery({});
  const working = (all.data?.items ?? []).filter((x) => x.parentAgentId === agent.id && LIVE.has(x.status));
  const onStop = () => {
    // the agents it spawned go on unless asked: the human decides
    const cascade = working.length > 0 && window.confirm(`${agent.alias} spawned ${working.length === 1 ? "1 agent that is" : `${working.length} agents that are`} still working (${working.map((x) => x.alias).join(", ")}). Stop ${working.length === 1 ? "it" : "them"} too?`);
    stop.mutate({ agentId: agent.id, cascade });
  };
  const del = trpc.agents.delete.useMutation({ onSuccess: () => navigate("/agents") });
  return (
    <div className="flex items-center gap-2">
      {LIVE.has(agent.status) && <Button variant="danger" onClick={onStop} disabled={stop.isPending}>Stop</Button>}
      <Button
        variant="ghost"
        onClick={() => {
          if (window.confirm(`Delete ${agent.alias} and its worktree? Its log is kept.`)) del.mutate({ agentId: agent.id, force: false });
        }}
      >
        Delete
      </Button>
      {(stop.error ?? del.error) && <span role="alert" className="text-sm text-red-600">{errorMessage(stop.error ?? del.error)}</span>}
    </div>
  );
}

function QuestionsForm({ agent }: { agent: AgentInfo }) {
  const [answers, setAnswers] = useState<Record<string, string>>({});
  const resume = trpc.agents.resume.useMutation();
  const submit = (e: FormEvent) => {
    e.preventDefault();
    resume.mutate({ agentId: agent.id, answers });
  };
  return (
    <form onSubmit={submit} data-testid="agent-questions" className="mt-4 space-y-3 rounded-xl border border-amber-300 bg-amber-50 p-4 dark:border-amber-700/60 dark:bg-amber-950/30">
      <h2 className="text-sm font-semibold text-amber-900 dark:text-amber-200">{agent.alias} needs your answers</h2>
      {agent.pendingQuestions.map((q) => (
        <label key={q.id} className="block text-sm text-zinc-800 dark:text-zinc-200">
          {q.question}
          <textarea required rows={2} value={answers[q.id] ?? ""} onChange={(e) => setAnswers({ ...answers, [q.id]: e.target.value })} className={`${fieldClass} mt-1`} aria-label={`Answer to ${q.id}`} />
        </label>
      ))}
      <div className="flex items-center gap-3">
        <Button type="submit" variant="primary" disabled={resume.isPending}>Answer and resume</Button>
        {resume.error && <span role="alert" className="text-sm text-red-600">{errorMessage(resume.error)}</span>}
      </div>
    </form>
  );
}

function ApprovalCard({ approval }: { approval: { id: string; toolName: string; input?: unknown } }) {
  return (
    <div data-testid="agent-approval" className="mt-4 rounded-xl border border-amber-300 bg-amber-50 p-4 text-sm dark:border-amber-700/60 dark:bg-amber-950/30">
      <p className="mb-2 font-semibold text-amber-900 dark:text-amber-200">{approval.toolName === "AskUserQuestion" ? "The agent asks" : `Allow ${approval.toolName}?`}</p>
      <ApprovalForm approval={approval} />
    </div>
  );
}

function MessageForm({ agent }: { agent: AgentInfo }) {
  const [text, setText] = useState("");
  const message = trpc.agents.message.useMutation({ onSuccess: () => setText("") });
  const live = LIVE.has(agent.status);
  return (
    <form
      onSubmit={(e) => {
        e.preventDefault();
        if (text.trim()) message.mutate({ agentId: agent.id, text });
      }}
      className="mt-4 flex items-start gap-2"
    >
      <label className="flex-1">
        <span className="sr-only">Follow-up message</span>
        <input value={text} onChange={(e) => setText(e.target.value)} placeholder={live ? "Queue a follow-up for when it finishes this turn" : "Send a follow-up (resumes the same session)"} className={fieldClass} />
      </label>
      <Button type="submit" disabled={message.isPending || !text.trim()}>{live ? "Queue" : "Send"}</Button>
      {agent.queuedMessages.length > 0 && <span data-testid="queued-count" className="self-center text-xs text-zinc-500">{agent.queuedMessages.length} queued</span>}
      {message.error && <span role="alert" className="self-center text-sm text-red-600">{errorMessage(message.error)}</span>}
    </form>
  );
}

/** The preloaded answer's state, rendered again when it settles. */
function usePreloadState(kind: "agent", id: string): PreloadState<"agent"> {
  const [, settled] = useState(0);
  const state = preloadState(kind, id);
  const pending = state.state === "pending" ? state.settled : undefined;
  useEffect(() => {
    let live = true;
    void pending?.then(() => live && settled((n) => n + 1));
    return () => {
      live = false;
    };
  }, [pending]);
  return state;
}
