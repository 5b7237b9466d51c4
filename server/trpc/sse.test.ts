import { initTRPC, tracked, TRPCError } from "@trpc/server";
import { fastifyTRPCPlugin } from "@trpc/server/adapters/fastify";
import Fastify, { type FastifyInstance } from "fastify";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { z } from "zod";
import { registerSubscriptionSse } from "./sse";

/**
 * trpc/sse.ts against tRPC's own SSE producer: the same router served by two Fastify apps, one
 * with registerSubscriptionSse in front of tRPC's plugin, one with tRPC's plugin alone; every
 * stream must be byte for byte what tRPC writes (bar the Date header).
 */
const t = initTRPC.create({ isDev: false, sse: { ping: { enabled: true, intervalMs: 1000 }, client: { reconnectAfterInactivityMs: 25_000 } } });
let finished = 0;
const testRouter = t.router({
  count: t.procedure.input(z.object({ n: z.number(), lastEventId: z.string().optional() })).subscription(async function* ({ input }) {
    const from = input.lastEventId ? Number(input.lastEventId) + 1 : 1;
    for (let i = from; i < from + input.n; i++) yield tracked(String(i), { i, text: `é "${i}"\n` });
  }),
  plain: t.procedure.subscription(async function* () {
    yield { a: 1 };
    yield [1, 2];
    yield "text";
  }),
  fails: t.procedure.subscription(async function* () {
    yield tracked("1", { ok: true });
    throw new TRPCError({ code: "BAD_REQUEST", message: "refused mid-way" });
  }),
  refuses: t.procedure.use(() => {
    throw new TRPCError({ code: "UNAUTHORIZED", message: "no" });
  }).subscription(async function* () {
    yield 1;
  }),
  idle: t.procedure.subscription(async function* ({ signal }) {
    try {
      yield tracked("1", "first");
      await new Promise<void>((resolve) => signal?.addEventListener("abort", () => resolve(), { once: true }));
    } finally {
      finished++;
    }
  }),
});

const apps: FastifyInstance[] = [];
let ours = "";
let theirs = "";

async function start(withOurs: boolean): Promise<string> {
  const app = Fastify();
  const trpcOptions = { router: testRouter, createContext: () => ({}) };
  if (withOurs) registerSubscriptionSse(app, "/trpc", trpcOptions);
  await app.register(fastifyTRPCPlugin, { prefix: "/trpc", trpcOptions });
  await app.listen({ host: "127.0.0.1", port: 0 });
  apps.push(app);
  return `http://127.0.0.1:${(app.server.address() as AddressInfo).port}`;
}

beforeAll(async () => {
  [ours, theirs] = await Promise.all([start(true), start(false)]);
});
afterAll(async () => {
  await Promise.all(apps.map((a) => a.close()));
});

async function get(base: string, path: string, init: RequestInit = {}): Promise<{ status: number; headers: Record<string, string>; body: string }> {
  const res = await fetch(`${base}/trpc/${path}`, { ...init, headers: { accept: "text/event-stream", ...init.headers } });
  const headers = Object.fromEntries([...res.headers].filter(([k]) => k !== "date"));
  return { status: res.status, headers, body: await res.text() };
}

const input = (v: unknown) => `?input=${encodeURIComponent(JSON.stringify(v))}`;

describe("tRPC subscriptions over SSE (trpc/sse.ts)", () => {
  it.each([
    ["tracked values, then the return event", `count${input({ n: 1000 })}`, {}],
    ["resumes after lastEventId from the input", `count${input({ n: 3, lastEventId: "41" })}`, {}],
    ["resumes after a Last-Event-ID header", `count${input({ n: 3 })}`, { headers: { "last-event-id": "7" } }],
    ["untracked values", "plain", {}],
    ["an error mid-way becomes a serialized-error event", "fails", {}],
    ["an error before the stream: tRPC's own answer", "refuses", {}],
    ["a bad input: tRPC's own answer", `count${input({ n: "x" })}`, {}],
    ["input that is not JSON: tRPC's own answer", "count?input=%7Bn", {}],
    ["a batch call: tRPC's own answer", `count?batch=1&input=${encodeURIComponent(JSON.stringify({ 0: { n: 1 } }))}`, {}],
    ["HEAD: tRPC's own answer", `count${input({ n: 1 })}`, { method: "HEAD" }],
    ["a trpc-accept header: tRPC's own answer", `count${input({ n: 1 })}`, { headers: { "trpc-accept": "application/jsonl" } }],
  ])("%s: the bytes tRPC writes", async (_, path, init: RequestInit) => {
    const [a, b] = await Promise.all([get(ours, path, init), get(theirs, path, init)]);
    expect(a).toEqual(b);
  });

  it("coalesces messages into fewer writes than messages", async () => {
    const res = await fetch(`${ours}/trpc/count${input({ n: 5000 })}`);
    let chunks = 0;
    let text = "";
    const decoder = new TextDecoder();
    const reader = res.body!.getReader();
    for (let r = await reader.read(); !r.done; r = await reader.read()) {
      chunks++;
      text += decoder.decode(r.value, { stream: true });
    }
    expect(text.match(/^id: /gm)).toHaveLength(5000);
    expect(chunks).toBeLessThan(500);
  });

  it("pings an idle stream, and ends the subscription when the client goes away", async () => {
    const before = finished;
    const controller = new AbortController();
    const res = await fetch(`${ours}/trpc/idle`, { signal: controller.signal });
    const reader = res.body!.getReader();
    const decoder = new TextDecoder();
    let text = "";
    while (!text.includes("event: ping")) text += decoder.decode((await reader.read()).value, { stream: true });
    expect(text).toBe(`event: connected\ndata: {"reconnectAfterInactivityMs":25000}\n\n\ndata: "first"\nid: 1\n\n\nevent: ping\ndata: \n\n\n`);
    controller.abort();
    const deadline = Date.now() + 5000;
    while (finished === before && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
    expect(finished).toBe(before + 1);
  });
});
