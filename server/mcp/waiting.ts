import { z } from "zod";
import type { ToolExtra } from "./tool-kit";

/**
 * Waiting tools (`start_run`/`get_run` with wait, `wait_for_agent`, `ask`) wait at most 50 s, so
 * no client's tool timeout (often 60 s) cuts them, then answer `status: "pending"`: call again.
 * They poll the procedures (the same on `/mcp` and over stdio, and stateless: any server of
 * several may answer the next call) and send progress notifications when the client asked for
 * them with a progressToken.
 */

export const MAX_WAIT_SECONDS = 50;

/**
 * A waiting tool's `timeoutSeconds`: more than 50 is accepted and waits 50 (clients often pass 60
 * or more, and a refusal would cost the model a turn for nothing); the answer is "pending" either way.
 */
export const timeoutSeconds = (def: number) =>
  z
    .number()
    .min(0)
    .default(def)
    .transform((s) => Math.min(s, MAX_WAIT_SECONDS))
    .describe(
      `How long to wait, in seconds (default ${def}, at most ${MAX_WAIT_SECONDS}: a larger value waits ${MAX_WAIT_SECONDS}). When it passes first, the answer has status "pending": call again to keep waiting.`,
    );

export type Waited<T> = { value: T; timedOut: boolean; waitedMs: number };

const POLL_MS = [100, 150, 250, 400, 600, 800, 1000] as const;
const PROGRESS_EVERY_MS = 5_000;

/** Read until `done(value)` or the timeout (or the client cancels); the last value read comes back. */
export async function waitUntil<T>(read: () => Promise<T>, done: (value: T) => boolean, opts: { timeoutMs: number; extra: ToolExtra; what: string }): Promise<Waited<T>> {
  const started = Date.now();
  const deadline = started + opts.timeoutMs;
  const progressToken = opts.extra._meta?.progressToken;
  let lastProgress = started;
  for (let i = 0; ; i++) {
    const value = await read();
    const now = Date.now();
    if (done(value)) return { value, timedOut: false, waitedMs: now - started };
    if (now >= deadline || opts.extra.signal.aborted) return { value, timedOut: true, waitedMs: now - started };
    if (progressToken !== undefined && now - lastProgress >= PROGRESS_EVERY_MS) {
      lastProgress = now;
      const elapsed = Math.round((now - started) / 1000);
      await opts.extra
        .sendNotification({ method: "notifications/progress", params: { progressToken, progress: elapsed, total: Math.round(opts.timeoutMs / 1000), message: `waiting for ${opts.what} (${elapsed} s)` } })
        .catch(() => {});
    }
    await sleep(Math.min(POLL_MS[Math.min(i, POLL_MS.length - 1)]!, Math.max(0, deadline - now)), opts.extra.signal);
  }
}

function sleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    if (signal.aborted) return resolve();
    const timer = setTimeout(done, ms);
    function done() {
      clearTimeout(timer);
      signal.removeEventListener("abort", done);
      resolve();
    }
    signal.addEventListener("abort", done, { once: true });
  });
}
