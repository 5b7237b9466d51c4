import { wrapLanguageModel, type LanguageModel } from "ai";
import { TimeSlice, type TurnShare } from "../lib/time-slice";

/**
 * A model whose streamed parts are read in time slices (see TimeSlice), so parallel answers take
 * turns on the event loop and each is read no faster than it is handled.
 *
 * Why at the model, not in the loop reading `fullStream`: `streamText` merges the model's stream
 * with its tool results by piping it into a sink that enqueues every part at once
 * (runToolsTransformation in the SDK), so nothing downstream holds the model back. The whole
 * answer is pulled off the socket as fast as it arrives: every network chunk is decoded, parsed
 * and validated, part by part, in one run of microtasks (tens of milliseconds per chunk while 20
 * runs stream, and the event loop does nothing else meanwhile), and the parts queue up unread
 * (hundreds of megabytes of them). Reading the model's own stream in slices puts the pace back
 * where it belongs: between slices what is not read stays in the socket, and a reader that keeps
 * reading (callLlm's loop waits on nothing else) finds at most one slice of parts queued.
 */
export function pacedModel(model: LanguageModel, share?: TurnShare): LanguageModel {
  if (typeof model !== "object" || model.specificationVersion !== "v3") return model;
  return wrapLanguageModel({
    model,
    middleware: {
      specificationVersion: "v3",
      wrapStream: async ({ doStream }) => {
        const result = await doStream();
        return { ...result, stream: pacedStream(result.stream, share) };
      },
    },
  });
}

/** `source`, read in time slices: its reader waits a turn of the event loop whenever a slice is used up. */
export function pacedStream<T>(source: ReadableStream<T>, share?: TurnShare): ReadableStream<T> {
  const reader = source.getReader();
  const slice = new TimeSlice(share);
  return new ReadableStream<T>({
    async pull(controller) {
      try {
        if (slice.due()) await slice.yield();
        const next = await reader.read();
        if (!next.done) return controller.enqueue(next.value);
        slice.close();
        controller.close();
      } catch (err) {
        slice.close();
        throw err;
      }
    },
    cancel(reason) {
      slice.close();
      return reader.cancel(reason);
    },
  });
}
