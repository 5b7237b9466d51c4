import { retryLink, TRPCClientError, type TRPCLink } from "@trpc/client";
import { observable } from "@trpc/server/observable";
import type { AppRouter } from "../../../server/trpc/router";

/** The wait before the next attempt after `failures` failed ones in a row: 1 s, 2 s, 4 s ... 15 s. */
export function backoffMs(failures: number): number {
  return Math.min(1000 * 2 ** Math.max(0, failures - 1), 15_000);
}

/** Answers that another attempt cannot change (bad input, no such procedure or thing). */
const FINAL = new Set(["BAD_REQUEST", "PARSE_ERROR", "NOT_FOUND", "METHOD_NOT_SUPPORTED", "UNPROCESSABLE_CONTENT"]);

function willRetry(error: TRPCClientError<AppRouter>): boolean {
  const code = error.data?.code;
  return code === undefined || !FINAL.has(code);
}

/**
 * How long until the subscription tries again, when `error` is the one announced by
 * resumeLink for a failed attempt; undefined for any other error (an EventSource reconnecting
 * by itself, a final error).
 */
export function retryDelayOf(error: unknown): number | undefined {
  if (!(error instanceof TRPCClientError)) return undefined;
  const delay: unknown = (error.meta as { retryInMs?: unknown } | undefined)?.retryInMs;
  return typeof delay === "number" ? delay : undefined;
}

/**
 * For subscriptions: tRPC's retryLink starts a failed subscription again (an HTTP error status
 * closes an EventSource for good), after a backoff that grows with the failures in a row and
 * starts over once an attempt connects. retryLink passes the last tracked id as `lastEventId` to
 * the next attempt's input, so a `tracked()` procedure resumes right after the last event
 * received: across a server restart too. An EventSource that merely reconnects by itself
 * (a dropped connection) resumes the same way, by its Last-Event-ID header.
 *
 * Each failed attempt that will be retried is announced to the subscriber as a connection state
 * `connecting` whose error carries `meta.retryInMs` (see retryDelayOf), so a page can say the
 * stream failed rather than that it is merely reconnecting.
 */
export function resumeLink(): TRPCLink<AppRouter> {
  return (runtime) =>
    ({ op, next }) =>
      observable((observer) => {
        let failures = 0;
        const retrying = retryLink<AppRouter>({
          retry: ({ error }) => willRetry(error),
          retryDelayMs: () => backoffMs(failures),
        })(runtime);
        // one subscription per attempt, below retryLink: it sees each attempt start and fail
        const attempt: typeof retrying = ({ op: attemptOp, next: below }) =>
          observable((o) => {
            const sub = below(attemptOp).subscribe({
              next(envelope) {
                if (envelope.result.type === "started") failures = 0;
                o.next(envelope);
              },
              error(error) {
                failures += 1;
                if (willRetry(error)) {
                  const announced = new TRPCClientError<AppRouter>(error.message, { cause: error, meta: { retryInMs: backoffMs(failures) } });
                  o.next({ result: { type: "state", state: "connecting", error: announced } });
                }
                o.error(error);
              },
              complete() {
                o.complete();
              },
            });
            return () => sub.unsubscribe();
          });
        const sub = retrying({ op, next: (attemptOp) => attempt({ op: attemptOp, next }) }).subscribe(observer);
        return () => sub.unsubscribe();
      });
}
