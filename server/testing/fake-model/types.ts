/** Shared types of the fake model server (test support). */

/** The three wire formats the fake speaks. */
export type FakeApi = "anthropic" | "chat" | "responses";

export type FakeToolCall = {
  name: string;
  /** The tool input; sent as JSON (Anthropic `input`, OpenAI `arguments`). */
  input: unknown;
  /** Defaults to a generated `toolu_fake_N` / `call_fake_N`. */
  id?: string;
  /**
   * Responses API only: the `namespace` of the call, for a tool offered inside a `namespace` tool
   * (codex offers each MCP server's tools so: `mcp__<server>`, the tool's own name as `name`).
   */
  namespace?: string;
};

export type FakeUsage = { inputTokens?: number; outputTokens?: number };

export type FakeStopReason = "end_turn" | "tool_use" | "max_tokens";

/** An error sent inside a 200 stream (after the text deltas, if any). */
export type FakeStreamError = {
  /** Anthropic error type or OpenAI error code: "rate_limit_error", "overloaded_error", "server_error"... */
  type: string;
  message?: string;
  /** Responses API only: `response.failed` (default) or a bare `error` event. */
  responsesEvent?: "response.failed" | "error";
};

/** A model turn: text, thinking, tool calls, pacing and failure modes. */
export type FakeTurn = {
  kind: "turn";
  /** Text split into deltas of `chunkSize` characters (default 6). Ignored when `deltas` is set. */
  text?: string;
  /** Exact text deltas. */
  deltas?: string[];
  chunkSize?: number;
  /** Thinking text (one delta) or thinking deltas; streamed before the text. */
  thinking?: string | string[];
  toolCalls?: FakeToolCall[];
  /** Defaults: input 10, output max(5, deltas) or 20 when the turn calls tools. */
  usage?: FakeUsage;
  /** Sleep between deltas. */
  delayMs?: number;
  /** Sleep before the response headers are written. */
  firstByteDelayMs?: number;
  /** Defaults to `tool_use` when there are tool calls, else `end_turn`. */
  stopReason?: FakeStopReason;
  /** After the text deltas, keep the stream open until the client goes away. */
  hang?: boolean;
  /** After the text deltas, fail in band (non-streaming: answer with the matching HTTP error). */
  streamError?: FakeStreamError;
};

/** An HTTP error answer (no stream). */
export type FakeHttpError = {
  kind: "http-error";
  status: number;
  /** Raw body; defaults to the API's error shape built from `errorType` and `message`. */
  body?: unknown;
  /** Defaults by status (Anthropic: rate_limit_error, overloaded_error, api_error...). */
  errorType?: string;
  message?: string;
  /** Extra headers, added to the defaults (`retry-after` and rate-limit reset headers on 429). */
  headers?: Record<string, string>;
  /** `retry-after` on 429 (default 1). */
  retryAfterSeconds?: number;
  firstByteDelayMs?: number;
};

export type FakeReply = FakeTurn | FakeHttpError;

/** What `enqueue` and handlers accept: a reply, or a plain string (the text of a turn). */
export type FakeReplyInput = FakeReply | string;

/** What the script interpreter reads from a request. */
export type ScriptInput = {
  /** System prompt (Anthropic `system`, system/developer messages, Responses `instructions`). */
  system: string;
  /** Text of the last user message. */
  lastUserText: string;
  /** Content of the tool result the last user turn holds, if any. */
  toolResult?: string;
  /** Names of the tools the request offers. */
  offeredTools: string[];
};

/** Every model API call the fake received. */
export type RecordedRequest = {
  index: number;
  api: FakeApi;
  method: string;
  /** Path without the query string. */
  path: string;
  /** Path with the query string. */
  url: string;
  /** Lower-cased header names; the API key is left visible on purpose. */
  headers: Record<string, string>;
  body: Record<string, unknown>;
  /** `x-api-key`, or the bearer token of `authorization`. */
  apiKey: string | undefined;
  model: string | undefined;
  stream: boolean;
  script: ScriptInput;
  /** Where the reply came from, and the reply (set once chosen). */
  source?: "queue" | "handler" | "script";
  reply?: FakeReply;
  status?: number;
  startedAt: number;
  endedAt?: number;
  /** The client closed the connection before the fake finished answering. */
  aborted: boolean;
};

/** Decides a reply from the recorded request; `undefined` falls through to the script language. */
export type FakeReplyHandler = (
  request: RecordedRequest,
) => FakeReplyInput | undefined | Promise<FakeReplyInput | undefined>;

/** Restricts a queued reply to one API and/or one API key. */
export type EnqueueTarget = { api?: FakeApi; apiKey?: string };

/** Any other request (probes, model lists, token counts). */
export type OtherRequest = { method: string; url: string; headers: Record<string, string>; at: number };
