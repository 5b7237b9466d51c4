import { createAnthropic } from "@ai-sdk/anthropic";
import { createOpenAI } from "@ai-sdk/openai";
import { createOpenAICompatible } from "@ai-sdk/openai-compatible";
import { APICallError, generateText, stepCountIs, streamText, tool, type LanguageModel } from "ai";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { z } from "zod";
import { fakeReply } from "./replies";
import { startFakeModelServer, type FakeModelServer } from "./server";
import type { FakeApi } from "./types";

/** The real AI SDK clients against the fake: text deltas, tool loops, usage, errors, aborts. */

let fake: FakeModelServer;
beforeAll(async () => {
  fake = await startFakeModelServer();
});
afterAll(() => fake.close());
beforeEach(() => fake.reset());

type Case = { name: string; api: FakeApi; model: () => LanguageModel };
const cases: Case[] = [
  { name: "anthropic", api: "anthropic", model: () => createAnthropic({ baseURL: fake.baseURL, apiKey: "k" })("claude-sonnet-4-5") },
  { name: "openai responses", api: "responses", model: () => createOpenAI({ baseURL: fake.baseURL, apiKey: "k" }).responses("gpt-x") },
  { name: "openai chat", api: "chat", model: () => createOpenAI({ baseURL: fake.baseURL, apiKey: "k" }).chat("gpt-x") },
  {
    name: "openai-compatible",
    api: "chat",
    model: () => createOpenAICompatible({ name: "x", baseURL: fake.baseURL, apiKey: "k", includeUsage: true })("gpt-x"),
  },
];

async function collect(stream: AsyncIterable<{ type: string; text?: string; error?: unknown }>): Promise<{ deltas: string[]; errors: unknown[] }> {
  const deltas: string[] = [];
  const errors: unknown[] = [];
  for await (const part of stream) {
    if (part.type === "text-delta") deltas.push(part.text ?? "");
    if (part.type === "error") errors.push(part.error);
  }
  return { deltas, errors };
}

const readFile = tool({
  description: "Read a file",
  inputSchema: z.object({ path: z.string() }),
  execute: async ({ path }) => `contents of ${path}`,
});

describe.each(cases)("AI SDK $name", ({ api, model }) => {
  it("streams text in the scripted number of deltas and reports usage", async () => {
    const result = streamText({ model: model(), system: "CHUNK[4]", prompt: "SAY[Draft from writer.]", maxRetries: 0 });
    const { deltas, errors } = await collect(result.fullStream);
    expect(errors).toEqual([]);
    expect(deltas).toEqual(["Draf", "t fr", "om w", "rite", "r."]);
    const usage = await result.usage;
    expect(usage.inputTokens).toBe(10);
    expect(usage.outputTokens).toBe(5);
    expect(fake.requests).toHaveLength(1);
    expect(fake.requests[0]).toMatchObject({ api, apiKey: "k", stream: true, source: "script", aborted: false });
  });

  it("LONG streams n deltas; default text when nothing is scripted", async () => {
    const long = streamText({ model: model(), prompt: "LONG[30]", maxRetries: 0 });
    const { deltas } = await collect(long.fullStream);
    expect(deltas).toHaveLength(30);
    expect(deltas.join("")).toMatch(/^t0 t1 t2 .* t29 $/);
    expect((await long.usage).outputTokens).toBe(30);
    const plain = await generateText({ model: model(), prompt: "hi", maxRetries: 0 });
    expect(plain.text).toBe("Hello from fake model");
  });

  it("runs a multi-step tool loop and echoes the tool result", async () => {
    const result = await generateText({
      model: model(),
      system: 'You explore files. USE_TOOL[read_file]{"path":"notes.txt"}',
      prompt: "What is in notes.txt?",
      tools: { read_file: readFile },
      stopWhen: stepCountIs(5),
      maxRetries: 0,
    });
    expect(result.steps).toHaveLength(2);
    expect(result.steps[0]?.toolCalls.map((c) => [c.toolName, c.input])).toEqual([["read_file", { path: "notes.txt" }]]);
    expect(result.steps[0]?.text).toBe("Calling read_file.");
    expect(result.text).toBe("Tool finished: contents of notes.txt");
    // "Tool finished: contents of notes.txt" is 36 characters: 6 deltas of 6.
    expect(result.totalUsage.outputTokens).toBe(20 + 6);
    expect(fake.requests.map((r) => r.script.toolResult)).toEqual([undefined, "contents of notes.txt"]);
  });

  it("USE_TOOL for a tool that is not offered is plain text", async () => {
    const result = await generateText({ model: model(), system: 'USE_TOOL[write_file]{"a":1}', prompt: "go", tools: { read_file: readFile }, maxRetries: 0 });
    expect(result.toolCalls).toEqual([]);
    expect(result.text).toBe("Hello from fake model");
  });

  it("streams several scripted tool calls in one turn", async () => {
    fake.enqueue(fakeReply.toolCalls([{ name: "read_file", input: { path: "a" } }, { name: "read_file", input: { path: "b" } }]));
    const result = streamText({ model: model(), prompt: "x", tools: { read_file: readFile }, maxRetries: 0 });
    const calls = await result.toolCalls;
    expect(calls.map((c) => c.input)).toEqual([{ path: "a" }, { path: "b" }]);
    expect(await result.finishReason).toBe("tool-calls");
  });

  it("surfaces an HTTP 429 as an APICallError with status 429", async () => {
    fake.enqueue(fakeReply.rateLimited({ message: "slow down" }));
    const error = await generateText({ model: model(), prompt: "x", maxRetries: 0 }).catch((e: unknown) => e);
    expect(APICallError.isInstance(error)).toBe(true);
    expect((error as APICallError).statusCode).toBe(429);
    expect((error as APICallError).message).toContain("slow down");
    expect((error as APICallError).responseHeaders?.["retry-after"]).toBe("1");
  });

  it("surfaces an in-band stream error", async () => {
    fake.enqueue(fakeReply.streamError("overloaded_error", { deltas: ["par", "tial"] }));
    const { deltas, errors } = await collect(streamText({ model: model(), prompt: "x", maxRetries: 0, onError: () => undefined }).fullStream);
    expect(deltas).toEqual(["par", "tial"]);
    expect(errors.length).toBeGreaterThan(0);
    expect(JSON.stringify(errors[0], Object.getOwnPropertyNames(errors[0] ?? {}))).toContain("Overloaded");
  });

  it("records an abort when the client stops mid-stream", async () => {
    const controller = new AbortController();
    const result = streamText({ model: model(), prompt: "DELAY[20] LONG[200]", abortSignal: controller.signal, maxRetries: 0 });
    let seen = 0;
    const reading = (async () => {
      for await (const _ of result.textStream) if (++seen === 3) controller.abort();
    })();
    await reading.catch(() => undefined);
    const [request] = await fake.waitForIdle();
    expect(seen).toBeGreaterThanOrEqual(3);
    expect(seen).toBeLessThan(200);
    expect(request?.aborted).toBe(true);
  });
});

describe("AI SDK details", () => {
  const anthropic = (): LanguageModel => createAnthropic({ baseURL: fake.baseURL, apiKey: "k" })("claude-sonnet-4-5");

  it("streams Anthropic thinking as reasoning", async () => {
    fake.enqueue(fakeReply.thinking(["Let me ", "think."], "Done."));
    const result = streamText({ model: anthropic(), prompt: "x", maxRetries: 0 });
    expect(await result.text).toBe("Done.");
    expect(await result.reasoningText).toBe("Let me think.");
  });

  it("routes queued replies by API key and serves a handler otherwise", async () => {
    fake.enqueue("for key two", { apiKey: "k2" });
    fake.setHandler((req) => (req.script.lastUserText === "ask" ? "from handler" : undefined));
    const other = createAnthropic({ baseURL: fake.baseURL, apiKey: "k2" })("claude-sonnet-4-5");
    expect((await generateText({ model: anthropic(), prompt: "ask", maxRetries: 0 })).text).toBe("from handler");
    expect((await generateText({ model: other, prompt: "ask", maxRetries: 0 })).text).toBe("for key two");
    expect((await generateText({ model: anthropic(), prompt: "SAY[script]", maxRetries: 0 })).text).toBe("script");
    expect(fake.requests.map((r) => r.source)).toEqual(["handler", "queue", "script"]);
    expect(fake.pending()).toBe(0);
  });
});
