import type { FakeApi, FakeHttpError, FakeStreamError } from "./types";

/** API-shaped error bodies and headers for HTTP errors, and the in-band error payloads. */

const ANTHROPIC_TYPES: Record<number, string> = {
  400: "invalid_request_error",
  401: "authentication_error",
  403: "permission_error",
  404: "not_found_error",
  413: "request_too_large",
  429: "rate_limit_error",
  500: "api_error",
  529: "overloaded_error",
};

const OPENAI_TYPES: Record<number, string> = {
  400: "invalid_request_error",
  401: "invalid_api_key",
  404: "model_not_found",
  429: "rate_limit_exceeded",
  500: "server_error",
  503: "server_error",
};

const MESSAGES: Record<string, string> = {
  rate_limit_error: "Number of request tokens has exceeded your per-minute rate limit",
  rate_limit_exceeded: "Rate limit reached for requests. Please try again in 1s.",
  overloaded_error: "Overloaded",
  api_error: "Internal server error",
  server_error: "The server had an error while processing your request.",
};

export function defaultErrorType(api: FakeApi, status: number): string {
  const table = api === "anthropic" ? ANTHROPIC_TYPES : OPENAI_TYPES;
  return table[status] ?? (status >= 500 ? (api === "anthropic" ? "api_error" : "server_error") : "invalid_request_error");
}

export function errorMessage(type: string, message?: string): string {
  return message ?? MESSAGES[type] ?? `Fake ${type}`;
}

/** The status a non-streaming request gets for an in-band error type. */
export function statusForErrorType(type: string): number {
  if (type === "overloaded_error") return 529;
  if (type.startsWith("rate_limit")) return 429;
  const known = Object.entries(ANTHROPIC_TYPES).find(([, name]) => name === type);
  return known ? Number(known[0]) : 500;
}

export function anthropicErrorBody(type: string, message?: string): Record<string, unknown> {
  return { type: "error", error: { type, message: errorMessage(type, message) } };
}

export function openaiErrorBody(type: string, message?: string): Record<string, unknown> {
  const serverSide = ["server_error", "api_error", "overloaded_error"].includes(type);
  const errorType = type.startsWith("rate_limit") ? "requests" : serverSide ? "server_error" : "invalid_request_error";
  return { error: { message: errorMessage(type, message), type: errorType, param: null, code: type } };
}

function rateLimitHeaders(api: FakeApi, retryAfter: number): Record<string, string> {
  const reset = new Date(Date.now() + retryAfter * 1000).toISOString();
  if (api === "anthropic") {
    return {
      "retry-after": String(retryAfter),
      "anthropic-ratelimit-requests-limit": "50",
      "anthropic-ratelimit-requests-remaining": "0",
      "anthropic-ratelimit-requests-reset": reset,
      "anthropic-ratelimit-tokens-reset": reset,
      "anthropic-ratelimit-input-tokens-reset": reset,
      "anthropic-ratelimit-output-tokens-reset": reset,
    };
  }
  return {
    "retry-after": String(retryAfter),
    "x-ratelimit-limit-requests": "60",
    "x-ratelimit-remaining-requests": "0",
    "x-ratelimit-reset-requests": `${retryAfter}s`,
    "x-ratelimit-reset-tokens": `${retryAfter}s`,
  };
}

/** Status, headers and body for an HTTP error reply. */
export function httpErrorResponse(
  api: FakeApi,
  reply: FakeHttpError,
  requestId: string,
): { status: number; headers: Record<string, string>; body: unknown } {
  const type = reply.errorType ?? defaultErrorType(api, reply.status);
  const body = reply.body ?? (api === "anthropic" ? anthropicErrorBody(type, reply.message) : openaiErrorBody(type, reply.message));
  const idHeader: Record<string, string> = { [api === "anthropic" ? "request-id" : "x-request-id"]: requestId };
  const limits = reply.status === 429 ? rateLimitHeaders(api, reply.retryAfterSeconds ?? 1) : {};
  return { status: reply.status, headers: { ...idHeader, ...limits, ...reply.headers }, body };
}

/** A non-streaming request whose turn fails in band gets this HTTP error instead. */
export function streamErrorAsHttp(error: FakeStreamError): FakeHttpError {
  return { kind: "http-error", status: statusForErrorType(error.type), errorType: error.type, message: error.message };
}
