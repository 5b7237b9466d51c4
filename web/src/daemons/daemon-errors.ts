import { TRPCClientError } from "@trpc/client";
import type { ErrorCode } from "../../../shared/errors";
import { errorCode, errorMessage } from "../lib/errors";

/** The `details` a domain error carries (server/trpc/init.ts errorFormatter), or {}. */
export function errorDetails(err: unknown): Record<string, unknown> {
  if (!(err instanceof TRPCClientError)) return {};
  const data: unknown = err.data;
  if (typeof data !== "object" || data === null) return {};
  const details = (data as { details?: unknown }).details;
  return typeof details === "object" && details !== null ? (details as Record<string, unknown>) : {};
}

/** A failed daemon call, as a code (when the server gave one) and a sentence saying what to do. */
export type DaemonErrorText = { code?: ErrorCode; message: string };

/** Readable text for the errors a daemon call can meet; unknown codes keep the server's message. */
export function describeDaemonError(err: unknown): DaemonErrorText {
  const code = errorCode(err);
  const details = errorDetails(err);
  const withCode = (text: string): DaemonErrorText => (code ? { code, message: text } : { message: text });
  switch (code) {
    case "DAEMON_QUEUE_FULL": {
      const capacity = typeof details.capacity === "number" ? ` (capacity ${details.capacity})` : "";
      return withCode(`The queue is full${capacity}: wait for the daemon to work through it, then send again.`);
    }
    case "DAEMON_NOT_RUNNING": {
      const status = typeof details.status === "string" ? details.status : "not running";
      return withCode(`The daemon is ${status}: resume it, then send the trigger again.`);
    }
    case "DAEMON_TRIGGERS_DISABLED":
      return withCode("This daemon was spawned with triggers turned off; it wakes only on its watch paths or timer.");
    case "DAEMON_NOT_FOUND":
      return withCode("This daemon does not exist any more (it may have been deleted).");
    default:
      return withCode(errorMessage(err));
  }
}
