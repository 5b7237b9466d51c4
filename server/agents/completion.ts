import type { AgentQuestion, AgentSignal } from "../../shared/agents";

/**
 * What to do when an agent's process has ended: a pure decision over what we observed, so every
 * case (signal, result line, exit code, retries) is one table and unit-testable.
 */
export interface ExitObservation {
  /** The user asked to stop it: nothing else matters. */
  stopRequested: boolean;
  signal: { signal: AgentSignal } | { error: string } | null;
  /** The CLI's final result line, if it printed one. */
  result: { isError: boolean; message: string } | null;
  rateLimit: { message: string; resetsAt?: string } | null;
  exitCode: number | null;
  /** Killed by our watchdog: hung after its result, or silent too long. */
  watchdog: "hung_after_result" | "silent" | null;
  lastText: string | null;
  stderrTail: string;
  canResume: boolean;
  missingSignalRetries: number;
  queuedMessages: number;
}

export type Completion =
  | { action: "stopped"; reason: string }
  | { action: "idle"; result: string | null; note?: string }
  | { action: "deliver_queued"; result: string | null }
  | { action: "waiting"; questions: AgentQuestion[] }
  | { action: "crashed"; reason: string }
  | { action: "rate_limited"; reason: string; resetsAt?: string }
  | { action: "retry_missing_signal" };

export function decideCompletion(o: ExitObservation): Completion {
  if (o.stopRequested) return { action: "stopped", reason: "stopped by a user" };
  if (o.signal && "error" in o.signal) return { action: "crashed", reason: `signal.json is invalid: ${o.signal.error}` };
  if (o.signal) {
    const s = o.signal.signal;
    if (s.status === "done") {
      const result = s.result.message;
      return o.queuedMessages > 0 ? { action: "deliver_queued", result } : { action: "idle", result };
    }
    if (s.status === "questions") return { action: "waiting", questions: s.questions.map((q) => ({ id: q.id, question: q.question })) };
    return { action: "crashed", reason: `the agent reported an error: ${s.error}` };
  }
  if (o.rateLimit) {
    return { action: "rate_limited", reason: `usage limit reached: ${o.rateLimit.message}`, ...(o.rateLimit.resetsAt ? { resetsAt: o.rateLimit.resetsAt } : {}) };
  }
  if (o.result?.isError) return { action: "crashed", reason: `the CLI reported an error: ${o.result.message || "(no message)"}` };
  if (o.watchdog === "silent") return { action: "crashed", reason: "no output for too long: stopped by the watchdog" };
  const finishedCleanly = o.result !== null || o.exitCode === 0 || o.watchdog === "hung_after_result";
  if (!finishedCleanly) {
    const code = o.exitCode === null ? "was killed" : `exited with code ${o.exitCode}`;
    const tail = o.stderrTail.trim();
    return { action: "crashed", reason: `the CLI ${code} without a result${tail ? `: ${tail}` : ""}` };
  }
  if (o.canResume && o.missingSignalRetries < 1) return { action: "retry_missing_signal" };
  const result = o.result?.message || o.lastText;
  const note = "finished without signal.json; the result is taken from its output";
  return o.queuedMessages > 0 ? { action: "deliver_queued", result } : { action: "idle", result, note };
}
