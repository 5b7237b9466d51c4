import { streamText } from "ai";
import { afterEach, describe, expect, it, vi } from "vitest";
import { runDaemonTurn } from "../daemons/daemon-turn";
import type { DaemonMeta } from "../daemons/persist";
import { captureFinish, onlyFullStream } from "./finish";
import { createMockModel } from "./mock";

afterEach(() => vi.restoreAllMocks());

describe("captureFinish", () => {
  it("holds the answer once fullStream is consumed: text, usage, finish reason, response messages", async () => {
    const finish = captureFinish();
    const result = streamText({ model: createMockModel("echo", { deltaDelayMs: 0 }), prompt: "Please repeat this sentence.", onFinish: finish.onFinish });
    for await (const part of result.fullStream) void part;
    const answer = finish.result();
    expect(answer.text).toBe("Please repeat this sentence.");
    expect(answer.finishReason).toBe("stop");
    expect(answer.totalUsage.outputTokens).toBe(7);
    expect(answer.response.messages).toEqual([{ role: "assistant", content: [{ type: "text", text: "Please repeat this sentence." }] }]);
  });

  it("throws as the SDK does when no step finished", () => {
    expect(() => captureFinish().result()).toThrow("No output generated");
  });

  it("a daemon turn reads its stream once: one tee, no replay of the buffered answer", async () => {
    const tee = vi.spyOn(ReadableStream.prototype, "tee");
    const meta = { options: { model: "mock/echo" }, system: null, name: "d" } as unknown as DaemonMeta;
    const turn = await runDaemonTurn({ resolveModel: () => ({ model: createMockModel("echo", { deltaDelayMs: 0 }) }) }, meta, "/tmp", [{ role: "user", content: "echo me, please" }], new AbortController().signal);
    expect(turn.text).toBe("echo me, please");
    expect(turn.responseMessages).toHaveLength(1);
    expect(tee).toHaveBeenCalledTimes(1);
  });

  it("onlyFullStream: the SDK's spare branch is cancelled, so it buffers nothing; the answer and the result's promises still arrive", async () => {
    const finish = captureFinish();
    const result = streamText({ model: createMockModel("echo", { deltaDelayMs: 0 }), prompt: "spare me", onFinish: finish.onFinish });
    const texts: string[] = [];
    for await (const part of onlyFullStream(result)) if (part.type === "text-delta") texts.push(part.text);
    expect(texts.join("")).toBe("spare me");
    expect(finish.result().text).toBe("spare me");
    // this SDK version keeps the spare branch here (if it moves, onlyFullStream is a no-op: notice it)
    const spare = (result as unknown as { baseStream: ReadableStream }).baseStream;
    expect(spare).toBeInstanceOf(ReadableStream);
    expect(await spare.getReader().read()).toEqual({ done: true, value: undefined });
    expect(await result.finishReason).toBe("stop");
  });
});
