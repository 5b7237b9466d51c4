import { longDeltas } from "./script";
import type { FakeHttpError, FakeStreamError, FakeToolCall, FakeTurn } from "./types";

/** Builders for scripted replies: `fake.enqueue(fakeReply.text("hi", { chunkSize: 1 }))`. */

type TurnOptions = Omit<FakeTurn, "kind">;
type HttpErrorOptions = Omit<FakeHttpError, "kind" | "status">;

export const fakeReply = {
  /** Text in deltas of `chunkSize` characters (default 6). */
  text: (text: string, options: TurnOptions = {}): FakeTurn => ({ kind: "turn", ...options, text }),
  /** Exactly these text deltas. */
  deltas: (deltas: string[], options: TurnOptions = {}): FakeTurn => ({ kind: "turn", ...options, deltas }),
  /** n deltas "t0 ", "t1 ", ... */
  long: (n: number, options: TurnOptions = {}): FakeTurn => ({ kind: "turn", ...options, deltas: longDeltas(n) }),
  /** One or more tool calls in one turn (optionally with text before them). */
  toolCalls: (toolCalls: FakeToolCall[], options: TurnOptions = {}): FakeTurn => ({ kind: "turn", ...options, toolCalls }),
  toolCall: (name: string, input: unknown, options: TurnOptions = {}): FakeTurn => ({ kind: "turn", ...options, toolCalls: [{ name, input }] }),
  /** Thinking first, then text. */
  thinking: (thinking: string | string[], text: string, options: TurnOptions = {}): FakeTurn => ({ kind: "turn", ...options, thinking, text }),
  /** Writes the text deltas, then keeps the stream open until the client aborts. */
  hang: (options: TurnOptions = {}): FakeTurn => ({ kind: "turn", deltas: [], ...options, hang: true }),
  /** A 200 stream that fails in band after its text deltas. */
  streamError: (type: string, options: TurnOptions & Omit<FakeStreamError, "type"> = {}): FakeTurn => {
    const { message, responsesEvent, ...turn } = options;
    return { kind: "turn", deltas: [], ...turn, streamError: { type, message, responsesEvent } };
  },
  httpError: (status: number, options: HttpErrorOptions = {}): FakeHttpError => ({ kind: "http-error", ...options, status }),
  /** 429 with `retry-after` and the API's rate-limit reset headers. */
  rateLimited: (options: HttpErrorOptions = {}): FakeHttpError => ({ kind: "http-error", ...options, status: 429 }),
  serverError: (options: HttpErrorOptions = {}): FakeHttpError => ({ kind: "http-error", ...options, status: 500 }),
};
