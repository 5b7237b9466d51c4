import { createServer, type Server } from "node:http";
import net, { type AddressInfo } from "node:net";
import { setImmediate as nextTurn } from "node:timers/promises";
import { afterEach, describe, expect, it } from "vitest";
import { readAhead, readAheadFetch } from "./read-ahead";

/** A byte source of `chunks` chunks of `size` bytes, handed out on request; `reads` counts them. */
function source(chunks: number, size: number) {
  const state = { reads: 0 };
  const stream = new ReadableStream<Uint8Array>(
    {
      pull(controller) {
        if (state.reads === chunks) return controller.close();
        controller.enqueue(new Uint8Array(size).fill(state.reads++ % 256));
      },
    },
    { highWaterMark: 0 },
  );
  return { stream, state };
}

describe("readAhead", () => {
  it("reads up to `high` bytes ahead, then nothing until its reader is below `low`, then a burst up to `high` again", async () => {
    const { stream, state } = source(100, 10);
    const reader = readAhead(stream, 50, 20).getReader();
    await nextTurn();
    expect(state.reads).toBe(5);
    // taking 3 leaves 20 bytes: not below `low`, no read
    for (let i = 0; i < 3; i++) await reader.read();
    await nextTurn();
    expect(state.reads).toBe(5);
    // one more leaves 10 bytes: read at once up to 50 again (4 chunks)
    await reader.read();
    await nextTurn();
    expect(state.reads).toBe(9);
  });

  it("hands on every byte in order, the end, and the source's error", async () => {
    const { stream } = source(40, 7);
    const got: number[] = [];
    const all = readAhead(stream, 30, 10).getReader();
    for (let next = await all.read(); !next.done; next = await all.read()) got.push(...next.value);
    expect(got).toEqual(Array.from({ length: 40 }, (_, i) => Array<number>(7).fill(i)).flat());

    // what was read before the source failed comes first, then the failure
    let pulls = 0;
    const failing = new ReadableStream<Uint8Array>(
      { pull: (c) => (pulls++ < 3 ? c.enqueue(new Uint8Array([pulls])) : c.error(new Error("reset"))) },
      { highWaterMark: 0 },
    );
    const reader = readAhead(failing).getReader();
    await nextTurn();
    for (let i = 1; i <= 3; i++) await expect(reader.read()).resolves.toEqual({ done: false, value: new Uint8Array([i]) });
    await expect(reader.read()).rejects.toThrow("reset");
  });

  it("cancelling it cancels the source", async () => {
    let reason: unknown;
    const body = new ReadableStream<Uint8Array>({ pull: (c) => c.enqueue(new Uint8Array(1)), cancel: (r) => void (reason = r) }, { highWaterMark: 0 });
    await readAhead(body).cancel("stop");
    expect(reason).toBe("stop");
  });
});

describe("readAheadFetch", () => {
  let server: Server | undefined;
  afterEach(() => server?.close());

  /** An SSE answer of `deltas` events written as fast as the socket takes them (a fast model). */
  async function sseServer(deltas: number): Promise<string> {
    server = createServer((_req, res) => {
      res.writeHead(200, { "content-type": "text/event-stream" });
      let i = 0;
      const write = () => {
        while (i < deltas) {
          const event = `event: content_block_delta\ndata: {"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"t${i++} "}}\n\n`;
          if (!res.write(event)) return void res.once("drain", write);
        }
        res.end();
      };
      write();
    });
    await new Promise<void>((resolve) => server!.listen(0, "127.0.0.1", resolve));
    return `http://127.0.0.1:${(server!.address() as AddressInfo).port}/`;
  }

  it("a reader taking one chunk per turn of the event loop: the socket is never read more than a few hundred KB at once", async () => {
    const url = await sseServer(20_000);
    // watching (not replacing) Node's socket reads: undici takes the whole socket buffer in one read
    // when it resumes a paused parser. Read through plain fetch at this pace, that buffer grows to
    // most of the 2.4 MB answer (~1.7 MB reads, copied whole on every resume).
    let largest = 0;
    const read = net.Socket.prototype.read;
    net.Socket.prototype.read = function (this: net.Socket, n?: number) {
      const chunk = read.call(this, n) as Buffer | string | null;
      largest = Math.max(largest, chunk?.length ?? 0);
      return chunk;
    };
    try {
      const response = await readAheadFetch()(url);
      const reader = response.body!.pipeThrough(new TextDecoderStream()).getReader();
      let text = "";
      for (let next = await reader.read(); !next.done; next = await reader.read()) {
        text += next.value;
        await nextTurn();
      }
      expect(text.match(/"text":"t\d+ "/g)).toHaveLength(20_000);
      expect(text).toContain('"text":"t19999 "');
    } finally {
      net.Socket.prototype.read = read;
    }
    expect(largest).toBeGreaterThan(0);
    expect(largest).toBeLessThan(512 * 1024);
  });

  it("returns an answer that is not server-sent events as it came", async () => {
    const plain = new Response("{}", { headers: { "content-type": "application/json" } });
    const fetch = readAheadFetch(() => Promise.resolve(plain));
    await expect(fetch("http://x/")).resolves.toBe(plain);
  });
});
