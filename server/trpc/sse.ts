import { getErrorShape, getTRPCErrorFromUnknown, isTrackedEnvelope, type AnyTRPCRouter, type TRPCError } from "@trpc/server";
import { fastifyRequestHandler, type FastifyTRPCPluginOptions } from "@trpc/server/adapters/fastify";
import type { FastifyInstance, FastifyReply, FastifyRequest } from "fastify";
import { Readable } from "node:stream";

/**
 * tRPC subscriptions over SSE (what `httpSubscriptionLink` reads), written here rather than by
 * tRPC's own producer: the same bytes, message for message (`event: connected`, then a `data:`
 * message per value with `id:` when it is `tracked`, `event: ping` after `ping.intervalMs`
 * without one, `event: serialized-error` or `event: return` at the end), and the same headers,
 * through the same Fastify reply. tRPC's producer sends each value through six async generators,
 * a ping timer and a race per value, and four web streams (a `res.write` per line); here a
 * value is one string appended to a buffer that goes out once the values at hand are taken
 * (a `process.nextTick` after the last of them, or every FLUSH_BYTES), with one ping timer per stream. A subscription of one event per message (the
 * dashboard's events.onEvent) costs a third of what it did.
 *
 * Only the plain request is served here: GET, one procedure, its `input` as JSON, no
 * `connectionParams` nor `trpc-accept`, on a router without `sse.maxDurationMs`. Anything else, and any failure before the stream starts (a bad input, a
 * refused scope, an unknown procedure), goes to tRPC's own handler, which answers as it always did.
 */

/** Buffered SSE text past which it is written at once rather than when the values at hand are taken. */
const FLUSH_BYTES = 64 * 1024;

type TrpcOptions = FastifyTRPCPluginOptions<AnyTRPCRouter>["trpcOptions"];
type SseConfig = { enabled?: boolean; maxDurationMs?: number; emitAndEndImmediately?: boolean; ping?: { enabled?: boolean; intervalMs?: number }; client?: Record<string, unknown> };

/** Serve every subscription procedure of the router at `${prefix}/<path>` (GET), before tRPC's catch-all route. */
export function registerSubscriptionSse<TRouter extends AnyTRPCRouter>(app: FastifyInstance, prefix: string, options: FastifyTRPCPluginOptions<TRouter>["trpcOptions"]): void {
  const trpcOptions = options as unknown as TrpcOptions;
  const router = trpcOptions.router;
  // what only tRPC's producer does (a maximum duration, one value then the end, response headers of our own): all of it to tRPC
  const sse = (router._def._config as { sse?: SseConfig }).sse;
  if (sse?.enabled === false || sse?.maxDurationMs || sse?.emitAndEndImmediately || trpcOptions.responseMeta) return;
  for (const [path, procedure] of Object.entries(router._def.procedures as Record<string, { _def: { type: string } }>)) {
    if (procedure._def.type !== "subscription") continue;
    // no HEAD route of its own: tRPC answers HEAD (204)
    app.get(`${prefix}/${path}`, { exposeHeadRoute: false }, (req, reply) => serve(req, reply, path, trpcOptions));
  }
}

async function serve(req: FastifyRequest, reply: FastifyReply, path: string, trpcOptions: TrpcOptions): Promise<FastifyReply | void> {
  const viaTrpc = () => fastifyRequestHandler({ ...trpcOptions, req, res: reply, path });
  const url = new URL(req.url, "http://localhost");
  if (url.searchParams.has("batch") || url.searchParams.has("connectionParams") || req.headers["trpc-accept"]) return viaTrpc();
  const router = trpcOptions.router;
  const config = router._def._config as { transformer: { input: { deserialize(v: unknown): unknown }; output: { serialize(v: unknown): unknown } }; sse?: SseConfig };
  let input: unknown;
  try {
    const raw = url.searchParams.get("input");
    input = raw === null ? undefined : config.transformer.input.deserialize(JSON.parse(raw));
  } catch {
    return viaTrpc();
  }
  // a reconnecting EventSource's Last-Event-ID resumes, as tRPC reads it
  const lastEventId = req.headers["last-event-id"] ?? url.searchParams.get("lastEventId") ?? url.searchParams.get("Last-Event-Id");
  if (typeof lastEventId === "string" && lastEventId) {
    if (input !== null && typeof input === "object" && !Array.isArray(input)) input = { ...input, lastEventId };
    else input ??= { lastEventId };
  }

  const abort = new AbortController();
  const onClose = () => abort.abort();
  reply.raw.once("close", onClose);
  const procedure = router._def.procedures[path] as (opts: unknown) => Promise<unknown>;
  const getRawInput = async () => input;
  const call = { path, procedure, getRawInput, result: () => input, batchIndex: 0 };
  const info = { isBatchCall: false, accept: null, calls: [call], type: "subscription", connectionParams: null, signal: abort.signal, url };
  let ctx: unknown;
  let iterable: unknown;
  try {
    ctx = await trpcOptions.createContext?.({ req, res: reply, info } as never);
    iterable = await procedure({ path, getRawInput, ctx, type: "subscription", signal: abort.signal, batchIndex: 0 });
  } catch {
    reply.raw.off("close", onClose);
    return viaTrpc();
  }
  if (!iterable || typeof (iterable as AsyncIterable<unknown>)[Symbol.asyncIterator] !== "function") {
    reply.raw.off("close", onClose);
    return viaTrpc();
  }

  const serialize = (v: unknown) => JSON.stringify(config.transformer.output.serialize(v));
  const formatError = (cause: unknown): string => {
    const error = getTRPCErrorFromUnknown(cause);
    trpcOptions.onError?.({ error, path, input, ctx, req, type: "subscription" } as never);
    return serialize(getErrorShape({ config: router._def._config, ctx, error: error as TRPCError, input, path, type: "subscription" }));
  };
  const body = sseBody((iterable as AsyncIterable<unknown>)[Symbol.asyncIterator](), { sse: config.sse ?? {}, serialize, formatError, abort });
  // returned: Fastify takes the reply as sent (a stream's headers go out with its first bytes)
  return reply.code(200).headers(SSE_HEADERS).send(body);
}

/** The headers tRPC's resolveResponse gives a subscription (its `vary`, then `sseHeaders`). */
export const SSE_HEADERS = {
  vary: "trpc-accept, accept",
  "content-type": "text/event-stream",
  "cache-control": "no-cache, no-transform",
  "x-accel-buffering": "no",
  connection: "keep-alive",
};

const message = (value: unknown, serialize: (v: unknown) => string): string =>
  isTrackedEnvelope(value) ? `data: ${serialize(value[1])}\nid: ${value[0]}\n\n\n` : `data: ${serialize(value)}\n\n\n`;

/**
 * The SSE body of one subscription: values of `iterator` as tRPC's `sseStreamProducer` writes
 * them, buffered while values come without waiting (a nextTick runs once the pump awaits one
 * that is not there yet: after the microtasks, before any I/O or timer). Pulls only while the
 * reader keeps up (a `push` that returns false waits for the next `read`). Destroyed (the client
 * went away): aborts and returns the iterator.
 */
export function sseBody(
  iterator: AsyncIterator<unknown>,
  o: { sse: SseConfig; serialize: (v: unknown) => string; formatError: (cause: unknown) => string; abort: AbortController },
): Readable {
  const pingMs = o.sse.ping?.enabled ? (o.sse.ping.intervalMs ?? 1000) : 0;
  let buffer = `event: connected\ndata: ${JSON.stringify(o.sse.client ?? {})}\n\n\n`;
  let wanted = false;
  let pumping = false;
  let finished = false;
  let closed = false;
  let scheduled = false;
  let lastAt = Date.now();
  let pingTimer: NodeJS.Timeout | undefined;

  const flush = () => {
    scheduled = false;
    if (closed) return;
    if (buffer) {
      const text = buffer;
      buffer = "";
      wanted = body.push(text);
    }
    if (finished) {
      closed = true;
      body.push(null);
    }
  };
  const write = (text: string) => {
    buffer += text;
    lastAt = Date.now();
    if (buffer.length >= FLUSH_BYTES) flush();
    else if (!scheduled) {
      scheduled = true;
      process.nextTick(flush);
    }
  };
  const finish = (text: string) => {
    clearTimeout(pingTimer);
    if (text) buffer += text;
    finished = true;
    flush();
  };
  const ping = () => {
    const idle = Date.now() - lastAt;
    if (idle >= pingMs) write("event: ping\ndata: \n\n\n");
    pingTimer = setTimeout(ping, idle >= pingMs ? pingMs : pingMs - idle);
  };
  const pump = async () => {
    pumping = true;
    try {
      while (wanted && !finished) {
        const next = await iterator.next();
        if (finished) return;
        if (next.done) return finish("event: return\ndata: \n\n\n");
        write(message(next.value, o.serialize));
      }
    } catch (cause) {
      if (o.abort.signal.aborted || (cause as { name?: string } | null)?.name === "AbortError") return finish("");
      finish(`event: serialized-error\ndata: ${o.formatError(cause)}\n\n\n`);
    } finally {
      pumping = false;
    }
  };

  const body = new Readable({
    read() {
      wanted = true;
      if (!pumping && !finished) void pump();
    },
    destroy(err, callback) {
      finished = closed = true;
      clearTimeout(pingTimer);
      o.abort.abort();
      void Promise.resolve(iterator.return?.()).catch(() => undefined);
      callback(err);
    },
  });
  if (pingMs > 0) pingTimer = setTimeout(ping, pingMs);
  flush();
  return body;
}
