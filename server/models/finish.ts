import type { FinishReason, LanguageModelUsage, ModelMessage } from "ai";

/** What a finished `streamText` call answered, as its onFinish callback reports it. */
export type FinishedAnswer = {
  text: string;
  totalUsage: LanguageModelUsage;
  finishReason: FinishReason;
  response: { messages: ModelMessage[] };
};

/**
 * Takes a `streamText` call's answer from its onFinish callback. Reading it from the result's
 * promises instead (`text`, `response`, `totalUsage`, `finishReason`) costs a full replay of the
 * buffered stream per getter: each calls the SDK's consumeStream, which tees the stream once more.
 * After consuming `fullStream` that is ~0.7 s of CPU at 20,000 deltas, spent after the answer is
 * complete and stolen from whatever runs next. onFinish runs before `fullStream` closes.
 */
export function captureFinish(): { onFinish: (event: FinishedAnswer) => void; result: () => FinishedAnswer } {
  let answer: FinishedAnswer | undefined;
  return {
    onFinish: (event) => {
      answer = { text: event.text, totalUsage: event.totalUsage, finishReason: event.finishReason, response: { messages: event.response.messages } };
    },
    result: () => {
      // as the SDK's own promises reject when no step finished
      if (!answer) throw new Error("No output generated. Check the stream for errors.");
      return answer;
    },
  };
}

/**
 * The result's `fullStream`, as its only reader. The SDK hands out each stream as one branch of a
 * tee and keeps the other for later readers; unread, that branch buffers every part of the answer
 * until the call is over (about 40 MB across 20 parallel 20,000-delta runs). Nothing here reads it
 * later (the answer comes from captureFinish), so it is cancelled: a cancelled tee branch receives
 * nothing more. Should the SDK rename its internals, this degrades to plain `fullStream`.
 */
export function onlyFullStream<T extends { fullStream: AsyncIterable<unknown> & ReadableStream<unknown> }>(result: T): T["fullStream"] {
  const stream = result.fullStream;
  const spare = (result as unknown as { baseStream?: unknown }).baseStream;
  if (spare instanceof ReadableStream && !spare.locked) void spare.cancel().catch(() => undefined);
  return stream;
}
