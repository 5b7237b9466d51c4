import { TRPCClientError } from "@trpc/client";
import { isErrorCode, type ErrorCode, type ErrorData } from "../../../shared/errors";

/** An error's `data` as it arrives: the server's errorFormatter fields (server/trpc/init.ts) and tRPC's own. */
type WireErrorData = Partial<Omit<ErrorData, "appCode">> & { appCode?: unknown; code?: unknown; httpStatus?: number };

function dataOf(err: unknown): WireErrorData | undefined {
  if (!(err instanceof TRPCClientError)) return undefined;
  const data: unknown = err.data;
  return typeof data === "object" && data !== null ? (data as WireErrorData) : undefined;
}

/** The stable code of a failed call (PREPARE_FAILED, RUN_NOT_FOUND, VALIDATION_ERROR...), one of shared/errors.ts. */
export function errorCode(err: unknown): ErrorCode | undefined {
  const data = dataOf(err);
  if (isErrorCode(data?.appCode)) return data.appCode;
  return isErrorCode(data?.code) ? data.code : undefined;
}

/** The server answered that the thing asked for does not exist (RUN_NOT_FOUND, AGENT_NOT_FOUND...): asking again will not help. */
export function isNotFound(err: unknown): boolean {
  const data = dataOf(err);
  return data?.code === "NOT_FOUND" || data?.httpStatus === 404 || /_NOT_FOUND$/.test(typeof data?.appCode === "string" ? data.appCode : "");
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
