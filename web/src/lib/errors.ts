import { TRPCClientError } from "@trpc/client";

/** What the server's errorFormatter adds to every error (server/trpc/init.ts). */
type ErrorData = { appCode?: string; code?: string; httpStatus?: number; issues?: Array<{ path: string; message: string }>; details?: unknown };

function dataOf(err: unknown): ErrorData | undefined {
  if (!(err instanceof TRPCClientError)) return undefined;
  const data: unknown = err.data;
  return typeof data === "object" && data !== null ? (data as ErrorData) : undefined;
}

/** The stable code of a failed call (PREPARE_FAILED, RUN_NOT_FOUND, VALIDATION_ERROR...). */
export function errorCode(err: unknown): string | undefined {
  return dataOf(err)?.appCode ?? dataOf(err)?.code;
}

/** The server answered that the thing asked for does not exist (RUN_NOT_FOUND, AGENT_NOT_FOUND...): asking again will not help. */
export function isNotFound(err: unknown): boolean {
  const data = dataOf(err);
  return data?.code === "NOT_FOUND" || data?.httpStatus === 404 || /_NOT_FOUND$/.test(data?.appCode ?? "");
}

/** True when the server could not be reached at all (not an answer with an error). */
export function isNetworkError(err: unknown): boolean {
  if (!(err instanceof TRPCClientError)) return false;
  return dataOf(err) === undefined && /fetch|network|Failed to|Load failed|JSON/i.test(err.message);
}

/** A message a user can act on. */
export function errorMessage(err: unknown): string {
  if (isNetworkError(err)) return "Cannot reach the Switchyard server. Check that `yard start` is running; then try again.";
  if (err instanceof Error) return err.message;
  return String(err);
}

/** Field issues of a validation error: `{"strategyPath": "needs runId or strategyPath"}`. */
export function fieldErrors(err: unknown): Record<string, string> {
  const out: Record<string, string> = {};
  for (const issue of dataOf(err)?.issues ?? []) out[issue.path] ??= issue.message;
  return out;
}
