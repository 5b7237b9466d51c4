import { useState, type FormEvent } from "react";
import { Button, fieldClass } from "../components/Button";
import { InlineError } from "../components/QueryError";
import { trpc } from "../trpc";
import { describeDaemonError } from "./daemon-errors";
import { parsePayload } from "./trigger-payload";

/**
 * Send a trigger: text, or JSON when it starts with `{` or `[` (checked here; nothing is sent
 * while it does not parse). The server's refusals (queue full, not running) are shown in words.
 */
export function TriggerForm({ id, running }: { id: string; running: boolean }) {
  const utils = trpc.useUtils();
  const [text, setText] = useState("");
  const [invalid, setInvalid] = useState<string | null>(null);
  const [sent, setSent] = useState<number | null>(null);
  const trigger = trpc.daemons.trigger.useMutation({
    onSuccess: ({ seq }) => {
      setText("");
      setSent(seq);
      void utils.daemons.snapshot.invalidate({ id });
    },
  });

  const submit = (e?: FormEvent) => {
    e?.preventDefault();
    // what the last send said ("Queued as #3", a refusal) is not about this payload
    setSent(null);
    trigger.reset();
    const parsed = parsePayload(text);
    if (!parsed.ok) {
      setInvalid(parsed.error);
      document.getElementById("trigger-payload")?.focus();
      return;
    }
    setInvalid(null);
    trigger.mutate({ id, payload: parsed.value });
  };

  const refused = trigger.error ? describeDaemonError(trigger.error) : undefined;
  const trimmed = text.trimStart();
  const kind = !trimmed ? null : trimmed.startsWith("{") || trimmed.startsWith("[") ? "JSON" : "text";
  return (
    <form onSubmit={submit} data-testid="trigger-form" className="rounded-xl border border-zinc-200 bg-white p-4 shadow-sm dark:border-zinc-800 dark:bg-zinc-900/60">
      <div className="mb-1.5 flex items-baseline justify-between gap-3">
        <label htmlFor="trigger-payload" className="text-sm font-semibold">
          Trigger payload
        </label>
        {kind && <span className="text-xs text-zinc-500 dark:text-zinc-400">sent as {kind}</span>}
      </div>
      <textarea
        id="trigger-payload"
        name="payload"
        rows={3}
        value={text}
        spellCheck={false}
        onChange={(e) => {
          setText(e.target.value);
          setInvalid(null);
          setSent(null);
        }}
        onKeyDown={(e) => {
          if (e.key === "Enter" && (e.metaKey || e.ctrlKey)) submit();
        }}
        placeholder={'Some text, or JSON such as {"issue": 42}'}
        aria-invalid={invalid ? true : undefined}
        aria-describedby={invalid ? "trigger-payload-error" : "trigger-payload-hint"}
        className={`${fieldClass} font-mono`}
      />
      {invalid ? (
        <InlineError id="trigger-payload-error">{invalid}</InlineError>
      ) : (
        <p id="trigger-payload-hint" className="mt-1.5 text-xs text-zinc-500 dark:text-zinc-400">
          Appended to the back of the queue and stored before the server answers. Ctrl+Enter sends.
        </p>
      )}
      <div className="mt-3 flex flex-wrap items-center gap-3">
        <Button type="submit" variant="primary" disabled={trigger.isPending}>
          {trigger.isPending ? "Sending…" : "Send trigger"}
        </Button>
        {!running && <span className="text-xs text-zinc-500 dark:text-zinc-400">The daemon is not running: the server refuses triggers until it is resumed.</span>}
        {sent !== null && !trigger.isPending && (
          <span data-testid="trigger-sent" role="status" className="text-xs text-emerald-700 dark:text-emerald-400">
            Queued as #{sent}
          </span>
        )}
      </div>
      {refused && (
        <p role="alert" data-testid="trigger-error" data-code={refused.code} className="mt-2 text-sm text-red-700 dark:text-red-400">
          {refused.code && <span className="mr-1.5 rounded bg-red-100 px-1.5 py-0.5 font-mono text-xs dark:bg-red-900/40">{refused.code}</span>}
          {refused.message}
        </p>
      )}
    </form>
  );
}
