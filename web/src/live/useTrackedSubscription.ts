import type { SkipToken } from "@tanstack/react-query";
import { skipToken } from "@tanstack/react-query";
import { useEffect, useRef, useState } from "react";
import type { SubscriptionStatus } from "./connection";
import { retryDelayOf } from "./resume-link";
import { TrackedBatcher, type TrackedMessage } from "./tracked-batcher";

/** Messages arriving together (a replay, a burst) are handed over in one batch: one render. */
export const FLUSH_MS = 40;

/** A `tracked()` subscription procedure of the tRPC React client, e.g. `trpc.runs.onEvents`. */
export type TrackedProcedure<TInput, TData> = {
  useSubscription: (
    input: TInput | SkipToken,
    opts: { onData: (message: TrackedMessage<TData>) => void },
  ) => { status: SubscriptionStatus; error: { message: string } | null };
};

export type TrackedStream = {
  /**
   * `pending` = live; `connecting` = (re)connecting; `error` = an attempt failed and the next
   * one waits its backoff (or, for an answer no retry can change, the stream gave up).
   */
  status: SubscriptionStatus;
  error?: string;
  /** The first batch is in. */
  received: boolean;
};

/**
 * Follow a `tracked()` subscription: `onBatch` gets its messages in batches (at most one per
 * `flushMs`, oldest first, each id once). Reconnects are the link's job (resumeLink in
 * web/src/trpc.ts: tRPC's retryLink with backoff, resuming after the last tracked id), so after
 * a dropped connection or a server restart the stream goes on with no gap; a message repeated
 * across a reconnect is dropped here by its id. A new `input` is a new stream.
 */
export function useTrackedSubscription<TInput, TData>(
  procedure: TrackedProcedure<TInput, TData>,
  input: TInput | SkipToken,
  onBatch: (batch: TData[]) => void,
  { flushMs = FLUSH_MS }: { flushMs?: number } = {},
): TrackedStream {
  const key = input === skipToken ? null : JSON.stringify(input);
  const [stream, setStream] = useState({ key, received: false });
  if (stream.key !== key) setStream({ key, received: false });

  const latest = useRef(onBatch);
  useEffect(() => {
    latest.current = onBatch;
  });
  const [batcher] = useState(
    () =>
      new TrackedBatcher<TData>((batch) => {
        latest.current(batch);
        setStream((s) => (s.received ? s : { ...s, received: true }));
      }, flushMs),
  );
  useEffect(() => () => batcher.reset(), [batcher, key]);

  const sub = procedure.useSubscription(input, { onData: (message) => void batcher.push(message) });
  const failed = sub.status === "connecting" && retryDelayOf(sub.error) !== undefined;
  return { status: failed ? "error" : sub.status, received: stream.received, ...(sub.error ? { error: sub.error.message } : {}) };
}
