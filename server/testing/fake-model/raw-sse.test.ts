import { gzipSync } from "node:zlib";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { fakeReply } from "./replies";
import { startFakeModelServer, type FakeModelServer } from "./server";

/** Raw fetch against the fake: event order and shapes of each wire format, probes, errors, aborts. */

let fake: FakeModelServer;
beforeAll(async () => {
  fake = await startFakeModelServer();
});
afterAll(() => fake.close());
beforeEach(() => fake.reset());

type Sse = { event?: string; data: string };
type Json = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any -- test-local JSON access

function parseSse(text: string): Sse[] {
  return text
    .split("\n\n")
    .filter((block) => block.trim() !== "")
    .map((block) => {
      const lines = block.split("\n");
      const event = lines.find((l) => l.startsWith("event: "))?.slice(7);
      return { event, data: lines.filter((l) => l.startsWith("data: ")).map((l) => l.slice(6)).join("\n") };
    });
}

async function post(path: string, body: unknown, headers: Record<string, string> = {}): Promise<Response> {
  return fetch(fake.url + path, { method: "POST", headers: { "content-type": "application/json", ...headers }, body: JSON.stringify(body) });
}

const json = (e: Sse): Json => JSON.parse(e.data) as Json;
const anthropicTools = [{ name: "read_file", input_schema: { type: "object" } }];
const messages = [{ role: "user", content: "hi" }];

describe("Anthropic Messages", () => {
  it("streams thinking, text and tool_use in the real event order", async () => {
    fake.enqueue(fakeReply.toolCall("read_file", { path: "notes.txt" }, { thinking: ["a", "b"], text: "Calling." }));
    const res = await post("/v1/messages?beta=true", { model: "claude-x", stream: true, messages, tools: anthropicTools }, { "x-api-key": "sk-ant" });
    expect(res.headers.get("content-type")).toContain("text/event-stream");
    const events = parseSse(await res.text());
    for (const e of events) expect(json(e).type).toBe(e.event);
    const summary = events.map((e) => {
      const d = json(e);
      return d.type === "content_block_delta" ? `${d.delta.type}` : d.type === "content_block_start" ? `start:${d.content_block.type}` : d.type;
    });
    expect(summary).toEqual([
      "message_start", "ping",
      "start:thinking", "thinking_delta", "thinking_delta", "signature_delta", "content_block_stop",
      "start:text", "text_delta", "text_delta", "content_block_stop",
      "start:tool_use", "input_json_delta", "input_json_delta", "input_json_delta", "content_block_stop",
      "message_delta", "message_stop",
    ]);
    const args = events.map(json).filter((d) => d.delta?.type === "input_json_delta").map((d) => d.delta.partial_json).join("");
    expect(JSON.parse(args)).toEqual({ path: "notes.txt" });
    const delta = events.map(json).find((d) => d.type === "message_delta");
    expect(delta).toMatchObject({ delta: { stop_reason: "tool_use" }, usage: { output_tokens: 20 } });
    expect(json(events[0]!).message).toMatchObject({ model: "claude-x", role: "assistant", usage: { input_tokens: 10 } });
    expect(fake.requests[0]).toMatchObject({ api: "anthropic", path: "/v1/messages", url: "/v1/messages?beta=true", apiKey: "sk-ant" });
    expect(fake.requests[0]?.headers["x-api-key"]).toBe("sk-ant");
  });

  it("answers the whole message without stream, with max_tokens when scripted", async () => {
    fake.enqueue(fakeReply.text("cut", { stopReason: "max_tokens", usage: { outputTokens: 3 } }));
    const body = (await (await post("/v1/messages", { model: "m", messages })).json()) as Json;
    expect(body).toMatchObject({ type: "message", role: "assistant", content: [{ type: "text", text: "cut" }], stop_reason: "max_tokens" });
    expect(body.usage).toMatchObject({ input_tokens: 10, output_tokens: 3 });
  });

  it("sends an in-band error event in a 200 stream", async () => {
    fake.enqueue(fakeReply.streamError("rate_limit_error", { deltas: ["x"] }));
    const res = await post("/v1/messages", { model: "m", stream: true, messages });
    expect(res.status).toBe(200);
    const events = parseSse(await res.text());
    expect(events.map((e) => e.event)).toEqual(["message_start", "ping", "content_block_start", "content_block_delta", "error"]);
    expect(json(events.at(-1)!)).toMatchObject({ type: "error", error: { type: "rate_limit_error" } });
  });

  it("answers 429 with Anthropic's error body and rate-limit headers", async () => {
    fake.enqueue(fakeReply.rateLimited({ retryAfterSeconds: 7 }));
    const res = await post("/v1/messages", { model: "m", stream: true, messages });
    expect(res.status).toBe(429);
    expect(res.headers.get("retry-after")).toBe("7");
    expect(Date.parse(res.headers.get("anthropic-ratelimit-requests-reset") ?? "")).toBeGreaterThan(Date.now());
    expect(await res.json()).toMatchObject({ type: "error", error: { type: "rate_limit_error", message: expect.any(String) } });
  });
});

describe("OpenAI Chat Completions", () => {
  const tools = [{ type: "function", function: { name: "f", parameters: {} } }];

  it("streams content, tool_calls, finish_reason, usage, then [DONE]", async () => {
    fake.enqueue(fakeReply.toolCalls([{ name: "f", input: { a: 1 } }, { name: "f", input: { b: 2 } }], { deltas: ["hi"] }));
    const res = await post("/v1/chat/completions", { model: "gpt-x", stream: true, stream_options: { include_usage: true }, messages, tools });
    const events = parseSse(await res.text());
    expect(events.every((e) => e.event === undefined)).toBe(true);
    expect(events.at(-1)?.data).toBe("[DONE]");
    const chunks = events.slice(0, -1).map(json);
    expect(chunks.every((c) => c.object === "chat.completion.chunk")).toBe(true);
    expect(chunks[0]?.choices[0].delta.role).toBe("assistant");
    expect(chunks[1]?.choices[0].delta.content).toBe("hi");
    const calls = chunks.flatMap((c) => c.choices[0]?.delta.tool_calls ?? []);
    expect(calls.filter((c: Json) => c.id).map((c: Json) => [c.index, c.function.name])).toEqual([[0, "f"], [1, "f"]]);
    const argsOf = (i: number): unknown => JSON.parse(calls.filter((c: Json) => c.index === i).map((c: Json) => c.function.arguments).join(""));
    expect([argsOf(0), argsOf(1)]).toEqual([{ a: 1 }, { b: 2 }]);
    expect(chunks.at(-2)?.choices[0].finish_reason).toBe("tool_calls");
    expect(chunks.at(-1)).toMatchObject({ choices: [], usage: { prompt_tokens: 10, completion_tokens: 20, total_tokens: 30 } });
  });

  it("omits the usage chunk unless asked; answers JSON without stream", async () => {
    const streamed = parseSse(await (await post("/v1/chat/completions", { model: "m", stream: true, messages })).text());
    expect(streamed.some((e) => e.data.includes('"usage"'))).toBe(false);
    const whole = (await (await post("/v1/chat/completions", { model: "m", messages: [{ role: "user", content: "SAY[ok]" }] })).json()) as Json;
    expect(whole).toMatchObject({ object: "chat.completion", choices: [{ message: { role: "assistant", content: "ok" }, finish_reason: "stop" }] });
    expect(whole.usage).toEqual({ prompt_tokens: 10, completion_tokens: 5, total_tokens: 15 });
  });

  it("sends an in-band error chunk and a 500 without stream", async () => {
    fake.enqueue(fakeReply.streamError("server_error"));
    const events = parseSse(await (await post("/v1/chat/completions", { model: "m", stream: true, messages })).text());
    expect(json(events.at(-1)!)).toMatchObject({ error: { code: "server_error", message: expect.any(String) } });
    fake.enqueue(fakeReply.serverError());
    const res = await post("/v1/chat/completions", { model: "m", messages }, { authorization: "Bearer sk-oa" });
    expect(res.status).toBe(500);
    expect(await res.json()).toMatchObject({ error: { type: "server_error" } });
    expect(fake.requests.at(-1)?.apiKey).toBe("sk-oa");
  });
});

describe("OpenAI Responses", () => {
  it("streams named events for a message and a function call, then response.completed", async () => {
    fake.enqueue(fakeReply.toolCall("shell", { cmd: ["ls"] }, { deltas: ["a", "b"] }));
    const res = await post("/v1/responses", { model: "gpt-x", stream: true, input: "x", tools: [{ type: "function", name: "shell" }] });
    const events = parseSse(await res.text());
    const data = events.map(json);
    for (const [i, e] of events.entries()) expect(data[i]).toMatchObject({ type: e.event, sequence_number: i });
    expect(events.map((e) => e.event)).toEqual([
      "response.created", "response.in_progress",
      "response.output_item.added", "response.content_part.added", "response.output_text.delta", "response.output_text.delta",
      "response.output_text.done", "response.content_part.done", "response.output_item.done",
      "response.output_item.added", "response.function_call_arguments.delta", "response.function_call_arguments.done", "response.output_item.done",
      "response.completed",
    ]);
    expect(data[9]?.item).toMatchObject({ type: "function_call", name: "shell", arguments: "" });
    expect(data[12]?.item).toMatchObject({ type: "function_call", name: "shell", arguments: '{"cmd":["ls"]}', status: "completed" });
    const completed = data.at(-1)?.response as Json;
    expect(completed.status).toBe("completed");
    expect(completed.output.map((o: Json) => o.type)).toEqual(["message", "function_call"]);
    expect(completed.usage).toMatchObject({ input_tokens: 10, output_tokens: 20, total_tokens: 30 });
  });

  it("fails with response.failed or a bare error event", async () => {
    fake.enqueue(fakeReply.streamError("rate_limit_exceeded"));
    fake.enqueue(fakeReply.streamError("server_error", { responsesEvent: "error", message: "boom" }));
    const failed = parseSse(await (await post("/v1/responses", { model: "m", stream: true, input: "x" })).text());
    expect(json(failed.at(-1)!)).toMatchObject({ type: "response.failed", response: { status: "failed", error: { code: "rate_limit_exceeded" } } });
    const errored = parseSse(await (await post("/v1/responses", { model: "m", stream: true, input: "x" })).text());
    expect(json(errored.at(-1)!)).toMatchObject({ type: "error", code: "server_error", message: "boom" });
  });

  it("answers the whole response without stream; max_tokens is incomplete", async () => {
    fake.enqueue(fakeReply.text("part", { stopReason: "max_tokens" }));
    const body = (await (await post("/v1/responses", { model: "m", input: "x" })).json()) as Json;
    expect(body).toMatchObject({ object: "response", status: "incomplete", incomplete_details: { reason: "max_output_tokens" } });
    expect(body.output[0]).toMatchObject({ type: "message", content: [{ type: "output_text", text: "part" }] });
  });
});

describe("server behaviour", () => {
  it("answers probes, model lists and unknown paths; records them apart", async () => {
    expect((await fetch(fake.url, { method: "HEAD" })).status).toBe(200);
    expect((await fetch(fake.url + "/")).status).toBe(200);
    const models = (await (await fetch(fake.url + "/v1/models")).json()) as Json;
    expect(models.data.map((m: Json) => m.id)).toContain("gpt-x");
    expect((await post("/v1/nothing", {})).status).toBe(404);
    expect((await fetch(fake.url + "/v1/messages", { method: "POST", body: "{not json" })).status).toBe(400);
    expect(fake.otherRequests.map((r) => r.method)).toEqual(["HEAD", "GET", "GET", "POST"]);
    expect(fake.requests).toHaveLength(0);
  });

  it("reads gzip bodies", async () => {
    const body = gzipSync(JSON.stringify({ model: "m", input: "SAY[zipped]" }));
    const res = await fetch(fake.url + "/v1/responses", { method: "POST", headers: { "content-encoding": "gzip" }, body });
    expect(((await res.json()) as Json).output[0].content[0].text).toBe("zipped");
  });

  it("waits firstByteDelayMs before answering and paces deltas", async () => {
    fake.enqueue(fakeReply.deltas(["a", "b", "c"], { firstByteDelayMs: 60, delayMs: 30 }));
    const started = Date.now();
    await (await post("/v1/messages", { model: "m", stream: true, messages })).text();
    expect(Date.now() - started).toBeGreaterThanOrEqual(60 + 2 * 30 - 5);
  });

  it("records aborted: true when the client leaves a hanging stream", async () => {
    fake.enqueue(fakeReply.hang({ deltas: ["first"] }));
    const res = await post("/v1/chat/completions", { model: "m", stream: true, messages });
    const reader = res.body!.getReader();
    expect(new TextDecoder().decode((await reader.read()).value)).toContain("chat.completion.chunk");
    await reader.cancel();
    const [request] = await fake.waitForIdle(2000);
    expect(request).toMatchObject({ aborted: true, status: 200 });
    expect(request?.endedAt).toBeGreaterThanOrEqual(request?.startedAt ?? Infinity);
  });

  it("records aborted: true when the client gives up before the first byte", async () => {
    fake.enqueue(fakeReply.text("late", { firstByteDelayMs: 10_000 }));
    const controller = new AbortController();
    const call = fetch(fake.url + "/v1/responses", { method: "POST", body: JSON.stringify({ model: "m", input: "x" }), signal: controller.signal });
    await fake.waitForRequests(1);
    controller.abort();
    await expect(call).rejects.toThrow();
    const [request] = await fake.waitForIdle(2000);
    expect(request?.aborted).toBe(true);
    expect(fake.requests[0]?.reply).toMatchObject({ kind: "turn", text: "late" });
  });

  it("finishes normally with aborted: false", async () => {
    await (await post("/v1/messages", { model: "m", stream: true, messages })).text();
    const [request] = await fake.waitForIdle();
    expect(request).toMatchObject({ aborted: false, status: 200, source: "script" });
  });
});
