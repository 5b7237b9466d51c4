import type { LanguageModelV3, LanguageModelV3StreamPart } from "@ai-sdk/provider";
import { streamText } from "ai";
import { setImmediate as nextTurn } from "node:timers/promises";
import { describe, expect, it } from "vitest";
import { TurnShare } from "../lib/time-slice";
import { pacedModel, pacedStream } from "./paced-model";

/** A share whose clock moves 1 ms per reading: every slice is due after its first items. */
const tightShare = () => {
  let t = 0;
  return new TurnShare(1, () => ++t);
};

/**
 * A model whose whole answer is there at once (as a network chunk's worth of deltas is), handed
 * out part by part on request; `pulled` counts the parts the SDK asked for.
 */
function burstModel(deltas: number) {
  const state = { pulled: 0 };
  const parts: LanguageModelV3StreamPart[] = [
    { type: "stream-start", warnings: [] },
    { type: "text-start", id: "t" },
    ...Array.from({ length: deltas }, (_, i): LanguageModelV3StreamPart => ({ type: "text-delta", id: "t", delta: `t${i} ` })),
    { type: "text-end", id: "t" },
    { type: "finish", finishReason: { unified: "stop", raw: "stop" }, usage: { inputTokens: { total: 1, noCache: 1, cacheRead: 0, cacheWrite: 0 }, outputTokens: { total: deltas, text: deltas, reasoning: 0 } } },
  ];
  const model: LanguageModelV3 = {
    specificationVersion: "v3",
    provider: "test",
    modelId: "burst",
    supportedUrls: {},
    doGenerate: () => Promise.reject(new Error("stream only")),
    doStream: () =>
      Promise.resolve({
        stream: new ReadableStream<LanguageModelV3StreamPart>(
          {
            pull(controller) {
              const part = parts[state.pulled++];
              if (part) controller.enqueue(part);
              else controller.close();
            },
          },
          { highWaterMark: 0 },
        ),
      }),
  };
  return { model, state, total: parts.length };
}

async function readAll<T>(stream: ReadableStream<T>): Promise<T[]> {
  const out: T[] = [];
  const reader = stream.getReader();
  for (let next = await reader.read(); !next.done; next = await reader.read()) out.push(next.value);
  return out;
}

const expected = (deltas: number) => Array.from({ length: deltas }, (_, i) => `t${i} `).join("");

describe("pacedModel", () => {
  it("the SDK pulls a model's whole answer ahead of its reader; paced, it takes one slice per turn", async () => {
    const plain = burstModel(2000);
    const reader = streamText({ model: plain.model, prompt: "go" }).fullStream.getReader();
    await reader.read();
    await nextTurn();
    expect(plain.state.pulled).toBeGreaterThanOrEqual(plain.total);
    await reader.cancel();

    const paced = burstModel(2000);
    const pacedReader = streamText({ model: pacedModel(paced.model, tightShare()), prompt: "go" }).fullStream.getReader();
    await pacedReader.read();
    await nextTurn();
    expect(paced.state.pulled).toBeLessThan(paced.total / 10);
    await pacedReader.cancel();
  });

  it("the answer is the same text in the same order, and other callbacks run while it is read", async () => {
    const { model } = burstModel(3000);
    let turns = 0;
    let reading = true;
    const tick = () => {
      turns++;
      if (reading) setImmediate(tick);
    };
    setImmediate(tick);
    let text = "";
    let finished = "";
    const result = streamText({ model: pacedModel(model, tightShare()), prompt: "go", onFinish: (e) => void (finished = e.text) });
    for await (const part of result.fullStream) if (part.type === "text-delta") text += part.text;
    reading = false;
    expect(text).toBe(expected(3000));
    expect(finished).toBe(expected(3000));
    expect(turns).toBeGreaterThan(10);
  });

  it("leaves a model it cannot wrap as it is", () => {
    expect(pacedModel("openai/gpt-5")).toBe("openai/gpt-5");
  });
});

describe("pacedStream", () => {
  it("a stream that ends, fails or is cancelled gives its share of the turn back", async () => {
    const share = tightShare();
    const ended = pacedStream(new ReadableStream({ start: (c) => (c.enqueue(1), c.close()) }), share);
    expect(await readAll(ended)).toEqual([1]);
    expect(share.active).toBe(0);

    const failing = pacedStream(new ReadableStream({ start: (c) => (c.enqueue(1), c.error(new Error("lost"))) }), share);
    await expect(readAll(failing)).rejects.toThrow("lost");
    expect(share.active).toBe(0);

    const cancelled = pacedStream(new ReadableStream({ pull: (c) => c.enqueue(1) }), share).getReader();
    await cancelled.read();
    expect(share.active).toBe(1);
    await cancelled.cancel();
    expect(share.active).toBe(0);
  });
});
