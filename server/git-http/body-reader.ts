import type { Readable } from "node:stream";

/**
 * Pull chunks from a readable one at a time, leaving no listener behind between pulls: unlike the
 * stream's own async iterator, stopping early does not destroy it, so the caller can still drain
 * it (`resume()`) or hand the rest on. Rejects when the stream errors or closes before its end.
 */
export function pullChunks(stream: Readable): AsyncIterator<Buffer> {
  return {
    next: () =>
      new Promise<IteratorResult<Buffer>>((resolve, reject) => {
        const finish = (result: IteratorResult<Buffer> | Error) => {
          stream.off("readable", tryRead).off("end", onEnd).off("error", finish).off("close", onClose);
          if (result instanceof Error) reject(result);
          else resolve(result);
        };
        const onEnd = () => finish({ value: undefined, done: true });
        const onClose = () => finish(stream.readableEnded ? { value: undefined, done: true } : new Error("the request body was cut off"));
        function tryRead(): boolean {
          const chunk = stream.read() as Buffer | string | null;
          if (chunk === null) return false;
          finish({ value: typeof chunk === "string" ? Buffer.from(chunk) : chunk, done: false });
          return true;
        }
        if (stream.errored) return reject(stream.errored);
        if (stream.readableEnded) return resolve({ value: undefined, done: true });
        if (stream.destroyed) return reject(new Error("the request body was cut off"));
        if (tryRead()) return;
        stream.on("readable", tryRead).on("end", onEnd).on("error", finish).on("close", onClose);
      }),
  };
}

/** Read and discard the rest of a stream; resolves when it has ended or failed. */
export function drain(stream: Readable): Promise<void> {
  return new Promise((resolve) => {
    if (stream.readableEnded || stream.destroyed) return resolve();
    stream.once("end", resolve).once("error", () => resolve()).once("close", resolve);
    stream.resume();
  });
}
