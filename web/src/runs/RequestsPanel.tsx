import { useState, type FormEvent } from "react";
import type { PendingRequest, PermissionDecision } from "../../../shared/runs";
import { Button, fieldClass } from "../components/Button";
import { LockIcon } from "../components/icons";
import { InlineError } from "../components/QueryError";
import { errorCode, errorMessage } from "../lib/errors";
import { trpc } from "../trpc";

/** What the run waits on a human for, each with its form, right under the run's header. */
export function RequestsPanel({ runId, requests }: { runId: string; requests: PendingRequest[] }) {
  if (requests.length === 0) return null;
  return (
    <section aria-labelledby="requests-title" data-testid="pending-requests" className="rounded-xl border border-amber-300 bg-amber-50/60 shadow-sm dark:border-amber-700/60 dark:bg-amber-950/20">
      <h2 id="requests-title" className="flex items-center gap-2 border-b border-amber-200 px-4 py-2.5 text-sm font-semibold text-amber-900 dark:border-amber-800/60 dark:text-amber-200">
        <span className="size-2 animate-pulse rounded-full bg-amber-500" aria-hidden="true" />
        {requests.length === 1 ? "The run waits for you" : `The run waits for you (${requests.length})`}
      </h2>
      <ul className="divide-y divide-amber-200 dark:divide-amber-800/50">
        {requests.map((r) => (
          <li key={r.requestId} className="px-4 py-3">
            {r.kind === "permission" ? <PermissionRequest runId={runId} request={r} /> : <TextRequest runId={runId} request={r} />}
          </li>
        ))}
      </ul>
    </section>
  );
}

function useRespond(runId: string, requestId: string) {
  const respond = trpc.runs.respond.useMutation();
  const message = respond.error ? (errorCode(respond.error) === "NO_PENDING_REQUEST" ? "This request is no longer open (answered elsewhere, or the run ended)." : errorMessage(respond.error)) : undefined;
  return { respond: (answer: { text?: string; decision?: PermissionDecision }) => respond.mutate({ runId, requestId, ...answer }), pending: respond.isPending, done: respond.isSuccess, error: message };
}

const OPERATION: Record<string, string> = { "fs.read": "read", "fs.write": "write", "fs.exec": "run" };

function PermissionRequest({ runId, request }: { runId: string; request: Extract<PendingRequest, { kind: "permission" }> }) {
  const { respond, pending, done, error } = useRespond(runId, request.requestId);
  const busy = pending || done;
  return (
    <div data-testid="permission-request" data-request-id={request.requestId}>
      <p className="flex items-start gap-2 text-sm">
        <LockIcon width={15} height={15} className="mt-0.5 shrink-0 text-amber-700 dark:text-amber-400" />
        <span className="min-w-0">
          <span className="font-medium">{request.agentName}</span> wants to {OPERATION[request.operation] ?? request.operation}{" "}
          <code className="rounded bg-white px-1 py-0.5 break-all ring-1 ring-amber-200 dark:bg-zinc-900 dark:ring-amber-800/60">{request.resource}</code>
          {request.toolName && (
            <span className="text-zinc-600 dark:text-zinc-400">
              {" "}
              with <code>{request.toolName}</code>
            </span>
          )}
          <span className="mt-0.5 block text-xs text-zinc-600 dark:text-zinc-400">Why it asks: {reasonText(request.reason)}</span>
        </span>
      </p>
      <div className="mt-3 flex flex-wrap gap-2 pl-6">
        <Button variant="primary" disabled={busy} onClick={() => respond({ decision: "allow" })}>
          Allow
        </Button>
        <Button disabled={busy} onClick={() => respond({ decision: "deny" })}>
          Deny
        </Button>
        <Button variant="ghost" disabled={busy} onClick={() => respond({ decision: "allow-session" })} title="Allow this for the rest of the run">
          Always allow
        </Button>
        <Button variant="ghost" disabled={busy} onClick={() => respond({ decision: "deny-session" })} title="Deny this for the rest of the run">
          Always deny
        </Button>
      </div>
      {error && <InlineError>{error}</InlineError>}
    </div>
  );
}

function reasonText(reason: string): string {
  if (reason === "policy-ask") return "the run's policy asks before touching files outside its directory.";
  return reason;
}

function TextRequest({ runId, request }: { runId: string; request: Extract<PendingRequest, { kind: "input" | "question" }> }) {
  const { respond, pending, done, error } = useRespond(runId, request.requestId);
  const [text, setText] = useState("");
  const [missing, setMissing] = useState(false);
  const id = `answer-${request.requestId}`;
  const prompt = request.kind === "question" ? request.question : request.prompt;
  const submit = (e: FormEvent) => {
    e.preventDefault();
    if (!text.trim()) {
      setMissing(true);
      return;
    }
    respond({ text });
  };
  return (
    <form data-testid={request.kind === "question" ? "question-request" : "input-request"} data-request-id={request.requestId} onSubmit={submit} noValidate>
      <label htmlFor={id} className="block text-sm">
        <span className="font-medium">{request.agentName}</span> {request.kind === "question" ? "asks" : "needs your input"}
        {prompt && <span className="mt-1 block whitespace-pre-wrap text-zinc-700 dark:text-zinc-300">{prompt}</span>}
      </label>
      <div className="mt-2 flex flex-col gap-2 sm:flex-row sm:items-start">
        <textarea
          id={id}
          rows={2}
          value={text}
          onChange={(e) => (setText(e.target.value), setMissing(false))}
          onKeyDown={(e) => {
            if (e.key === "Enter" && (e.metaKey || e.ctrlKey)) submit(e);
          }}
          placeholder={request.kind === "question" ? "Your answer" : "Your input"}
          aria-invalid={missing || undefined}
          className={fieldClass}
        />
        <Button type="submit" variant="primary" disabled={pending || done}>
          {request.kind === "question" ? "Answer" : "Send"}
        </Button>
      </div>
      {missing && <InlineError>Write something first (Ctrl+Enter sends).</InlineError>}
      {error && <InlineError>{error}</InlineError>}
    </form>
  );
}
