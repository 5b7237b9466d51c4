/**
 * A streamed answer's bytes read ahead of its parser, at most this many (then reading pauses).
 * A burst (HIGH - LOW) must take more than the 64 KB one socket read adds, or the socket's buffer
 * still grows; it stays small because reading a burst is not paced (it runs in one turn).
 */
export const READ_AHEAD_HIGH_BYTES = 128 * 1024;
/** Reading resumes once the bytes read ahead fall below this. */
export const READ_AHEAD_LOW_BYTES = 32 * 1024;

/**
 * `body`, read ahead in bursts: once fewer than `low` bytes wait, it is read at once (promise
 * after promise, no turn of the event loop between reads) until `high` bytes wait, then not at
 * all until its reader has taken them down to `low` again. Backpressure with hysteresis, for the
 * body of a `fetch` answer whose reader is slow (a model read in time slices, see pacedModel).
 *
 * Why: Node's fetch (undici) pauses its HTTP parser when the body's 16 KB buffer is full and puts
 * the rest of the socket's data back (`socket.unshift`). Resuming, it takes the whole socket
 * buffer in one `socket.read()`, which copies it into one new buffer and starts the socket
 * reading again; parses 16 KB of it; pauses and puts the rest back. A reader that takes a little
 * per turn of the event loop (each turn the socket adds 64 KB while 16 KB are parsed) lets the
 * socket's buffer grow to most of the answer, copied whole on every resume: 20 paced answers of
 * 20,000 deltas held ~1.5 MB each this way, and peak RSS went from ~255 MB to ~430 MB. Read in
 * bursts, the parser is resumed many times within one turn, which drains the socket's buffer
 * before it takes more; while the reader is behind, the socket is paused with less than 128 KB
 * in it and the rest waits in the kernel (TCP flow control holds the sender back).
 */
export function readAhead(body: ReadableStream<Uint8Array>, high = READ_AHEAD_HIGH_BYTES, low = READ_AHEAD_LOW_BYTES): ReadableStream<Uint8Array> {
  const reader = body.getReader();
  let failure: { error: unknown } | undefined;
  return new ReadableStream<Uint8Array>(
    {
      // called once fewer than `low` bytes are queued (desiredSize > 0); fills the queue to `high`
      async pull(controller) {
        try {
          while (!failure && (controller.desiredSize ?? 0) > low - high) {
            const next = await reader.read();
            if (next.done) return controller.close();
            controller.enqueue(next.value);
          }
        } catch (error) {
          failure = { error };
        }
        // the bytes read before a failure are handed on first (erroring the stream would drop them)
        if (failure && controller.desiredSize === low) controller.error(failure.error);
      },
      cancel: (reason) => reader.cancel(reason),
    },
    new ByteLengthQueuingStrategy({ highWaterMark: low }),
  );
}

/**
 * `fetch` (default: the global one, looked up at each call) whose server-sent-event answers are
 * read ahead (see readAhead); any other answer is returned as it came.
 */
export function readAheadFetch(fetch?: typeof globalThis.fetch): typeof globalThis.fetch {
  return async (input, init) => {
    const response = await (fetch ?? globalThis.fetch)(input, init);
    if (!response.body || !response.headers.get("content-type")?.includes("text/event-stream")) return response;
    return new Response(readAhead(response.body), { status: response.status, statusText: response.statusText, headers: response.headers });
  };
}
