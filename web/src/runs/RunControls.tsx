import { useState, type FormEvent, type ReactNode } from "react";
import { Button, fieldClass } from "../components/Button";
import { PlayIcon, SteerIcon, StopIcon } from "../components/icons";
import { InlineError } from "../components/QueryError";
import { errorMessage } from "../lib/errors";
import { trpc } from "../trpc";

/** Stop a running run (the model calls are aborted; the run ends cancelled). */
export function StopButton({ runId }: { runId: string }) {
  const stop = trpc.runs.stop.useMutation();
  return (
    <div className="flex flex-col items-end">
      <Button variant="danger" data-testid="stop-run" disabled={stop.isPending || stop.isSuccess} onClick={() => stop.mutate({ runId })}>
        <StopIcon width={14} height={14} />
        {stop.isPending || stop.isSuccess ? "Stopping…" : "Stop"}
      </Button>
      {stop.error && <InlineError>{errorMessage(stop.error)}</InlineError>}
    </div>
  );
}

/** A one-line form: text field, button, inline errors. */
function TextForm(props: { testId: string; label: string; hint: string; placeholder: string; button: string; icon: ReactNode; multiline?: boolean; required: boolean; pending: boolean; error?: string; onSubmit: (text: string) => Promise<unknown> }) {
  const [text, setText] = useState("");
  const [missing, setMissing] = useState(false);
  const [sent, setSent] = useState<string | null>(null);
  const id = `${props.testId}-text`;
  const submit = async (e: FormEvent) => {
    e.preventDefault();
    if (props.required && !text.trim()) {
      setMissing(true);
      return;
    }
    try {
      await props.onSubmit(text);
      setSent(text);
      setText("");
    } catch {
      // shown from the mutation's error
    }
  };
  const fieldProps = {
    id,
    value: text,
    placeholder: props.placeholder,
    "aria-invalid": missing || undefined,
    className: fieldClass,
  };
  const onChange = (value: string) => (setText(value), setMissing(false), setSent(null));
  return (
    <form data-testid={props.testId} onSubmit={(e) => void submit(e)} noValidate className="min-w-0">
      <label htmlFor={id} className="block text-sm font-medium">
        {props.label}
      </label>
      <div className="mt-1.5 flex flex-col gap-2 sm:flex-row sm:items-start">
        {props.multiline ? <textarea rows={2} {...fieldProps} onChange={(e) => onChange(e.target.value)} /> : <input {...fieldProps} onChange={(e) => onChange(e.target.value)} />}
        <Button type="submit" variant="secondary" disabled={props.pending}>
          {props.icon}
          {props.button}
        </Button>
      </div>
      {missing ? (
        <InlineError>Write something first.</InlineError>
      ) : props.error ? (
        <InlineError>{props.error}</InlineError>
      ) : (
        <p className="mt-1.5 text-xs text-zinc-500 dark:text-zinc-400">{sent !== null ? `Sent: “${sent.length > 80 ? `${sent.slice(0, 79)}…` : sent}”. ${props.hint}` : props.hint}</p>
      )}
    </form>
  );
}

/** Steering: a note for the agents, added to the next agent call's message. */
export function SteerForm({ runId }: { runId: string }) {
  const steer = trpc.runs.steer.useMutation();
  return (
    <TextForm
      testId="steer-form"
      label="Steer the run"
      hint="It is added to the next agent call's message."
      placeholder="e.g. Keep it under 100 words"
      button="Steer"
      icon={<SteerIcon width={14} height={14} />}
      required
      pending={steer.isPending}
      error={steer.error ? errorMessage(steer.error) : undefined}
      onSubmit={(text) => steer.mutateAsync({ runId, text })}
    />
  );
}

/** Continue a finished run with a new input: prepare it from its timeline, then continue_run. */
export function ContinueForm({ runId }: { runId: string }) {
  const prepare = trpc.runs.prepare.useMutation();
  const cont = trpc.runs.continue.useMutation();
  const error = prepare.error ?? cont.error;
  return (
    <TextForm
      testId="continue-form"
      label="Continue the run"
      hint="The agents keep their earlier conversation; the flow runs again with this input."
      placeholder="What next?"
      button="Continue"
      icon={<PlayIcon width={14} height={14} />}
      multiline
      required={false}
      pending={prepare.isPending || cont.isPending}
      error={error ? errorMessage(error) : undefined}
      onSubmit={async (input) => {
        prepare.reset();
        cont.reset();
        await prepare.mutateAsync({ runId });
        await cont.mutateAsync({ runId, input });
      }}
    />
  );
}

/** A prepared run that was never started (e.g. from a script): start it here. */
export function StartForm({ runId }: { runId: string }) {
  const start = trpc.runs.start.useMutation();
  return (
    <TextForm
      testId="start-form"
      label="Start the run"
      hint="It was prepared but not started yet."
      placeholder="Input for the first step"
      button="Start"
      icon={<PlayIcon width={14} height={14} />}
      multiline
      required={false}
      pending={start.isPending}
      error={start.error ? errorMessage(start.error) : undefined}
      onSubmit={(input) => start.mutateAsync({ runId, input })}
    />
  );
}
