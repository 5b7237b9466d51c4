import { useState } from "react";
import { Button, fieldClass } from "../components/Button";
import { errorMessage } from "../lib/errors";
import { trpc } from "../trpc";

type AskInput = { questions: Array<{ question: string; header?: string; options?: Array<{ label: string; description?: string }> }> };

function asAskUserQuestion(toolName: string, input: unknown): AskInput | null {
  if (toolName !== "AskUserQuestion" || !input || typeof input !== "object") return null;
  const qs = (input as { questions?: unknown }).questions;
  return Array.isArray(qs) && qs.every((q) => q && typeof (q as { question?: unknown }).question === "string") ? (input as AskInput) : null;
}

/**
 * A pending tool approval: Allow / Deny; for Claude's AskUserQuestion, the questions themselves,
 * answered and sent back as the tool's answers (the agent goes on with them).
 */
export function ApprovalForm({ approval }: { approval: { id: string; toolName: string; input?: unknown } }) {
  const decide = trpc.agents.decide.useMutation();
  const ask = asAskUserQuestion(approval.toolName, approval.input);
  const [answers, setAnswers] = useState<Record<string, string>>({});
  if (ask) {
    return (
      <form
        className="space-y-2 text-sm"
        onSubmit={(e) => {
          e.preventDefault();
          decide.mutate({ approvalId: approval.id, allow: true, updatedInput: { ...(approval.input as object), answers } });
        }}
      >
        {ask.questions.map((q) => (
          <label key={q.question} className="block text-zinc-800 dark:text-zinc-200">
            {q.question}
            {q.options && q.options.length > 0 && (
              <span className="mt-1 flex flex-wrap gap-1">
                {q.options.map((o) => (
                  <button key={o.label} type="button" title={o.description} onClick={() => setAnswers({ ...answers, [q.question]: o.label })} className="rounded-full border border-zinc-300 px-2 py-0.5 text-xs hover:bg-zinc-100 aria-pressed:border-indigo-500 aria-pressed:bg-indigo-50 dark:border-zinc-700 dark:hover:bg-zinc-800 dark:aria-pressed:bg-indigo-950" aria-pressed={answers[q.question] === o.label}>
                    {o.label}
                  </button>
                ))}
              </span>
            )}
            <input required aria-label={`Answer: ${q.question}`} value={answers[q.question] ?? ""} onChange={(e) => setAnswers({ ...answers, [q.question]: e.target.value })} className={`${fieldClass} mt-1`} />
          </label>
        ))}
        <div className="flex gap-2">
          <Button type="submit" variant="primary" disabled={decide.isPending}>Answer</Button>
          <Button variant="ghost" onClick={() => decide.mutate({ approvalId: approval.id, allow: false, message: "The user chose not to answer." })}>Skip</Button>
          {decide.error && <span role="alert" className="text-red-600">{errorMessage(decide.error)}</span>}
        </div>
      </form>
    );
  }
  return (
    <div className="space-y-2 text-sm">
      <pre className="rounded bg-zinc-50 p-2 font-mono text-xs whitespace-pre-wrap dark:bg-zinc-950">{JSON.stringify(approval.input, null, 2)}</pre>
      <div className="flex gap-2">
        <Button variant="primary" onClick={() => decide.mutate({ approvalId: approval.id, allow: true })} disabled={decide.isPending}>Allow</Button>
        <Button variant="danger" onClick={() => decide.mutate({ approvalId: approval.id, allow: false })} disabled={decide.isPending}>Deny</Button>
        {decide.error && <span role="alert" className="text-red-600">{errorMessage(decide.error)}</span>}
      </div>
    </div>
  );
}
