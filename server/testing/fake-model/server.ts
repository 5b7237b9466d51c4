import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { answer } from "./answer";
import { anthropicErrorBody, openaiErrorBody } from "./http-errors";
import { apiKeyOf, flatHeaders, readBody, routeOf } from "./http-util";
import { extractScriptInput } from "./request-input";
import { ClientGoneError, ResponseWriter, type WireContext } from "./response-writer";
import { interpretScript } from "./script";
import { toReply } from "./turn-plan";
import type { EnqueueTarget, FakeApi, FakeReply, FakeReplyHandler, FakeReplyInput, OtherRequest, RecordedRequest } from "./types";

/** A scriptable fake LLM HTTP server (Anthropic Messages, OpenAI Chat Completions and Responses). */

export type FakeModelServerOptions = {
  /** Default 0 (a random free port). */
  port?: number;
  /** Default 127.0.0.1. */
  host?: string;
  handler?: FakeReplyHandler;
  /** Ids listed by `GET /v1/models`. */
  models?: string[];
};

export type FakeModelServer = {
  /** `http://127.0.0.1:PORT` (no trailing slash). */
  readonly url: string;
  /** `url + "/v1"`: the baseURL the SDKs want. */
  readonly baseURL: string;
  readonly port: number;
  /** Every model API call, in arrival order. */
  readonly requests: RecordedRequest[];
  /** Probes (`HEAD /`), model lists, token counts, unknown paths. */
  readonly otherRequests: OtherRequest[];
  /** Queues replies, consumed FIFO; a reply with a target is only taken by matching requests. */
  enqueue(reply: FakeReplyInput | FakeReplyInput[], target?: EnqueueTarget): void;
  /** Replies still queued. */
  pending(): number;
  /** Consulted when no queued reply matches; returning undefined falls through to the script. */
  setHandler(handler: FakeReplyHandler | undefined): void;
  /** Resolves once n model calls have arrived. */
  waitForRequests(n: number, timeoutMs?: number): Promise<RecordedRequest[]>;
  /** Resolves once every model call received so far has ended (finished or aborted). */
  waitForIdle(timeoutMs?: number): Promise<RecordedRequest[]>;
  /** Forgets requests, queued replies and the handler. */
  reset(): void;
  close(): Promise<void>;
};

const DEFAULT_MODELS = ["claude-sonnet-4-5", "gpt-x"];

type Queued = { reply: FakeReply; target: EnqueueTarget };

function matches(target: EnqueueTarget, api: FakeApi, apiKey: string | undefined): boolean {
  return (target.api === undefined || target.api === api) && (target.apiKey === undefined || target.apiKey === apiKey);
}

class FakeModel implements FakeModelServer {
  readonly requests: RecordedRequest[] = [];
  readonly otherRequests: OtherRequest[] = [];
  url = "";
  baseURL = "";
  port = 0;
  private queue: Queued[] = [];
  private listeners = new Set<() => void>();
  private nextId = 0;

  constructor(
    private readonly server: Server,
    private handler: FakeReplyHandler | undefined,
    private readonly models: string[],
  ) {}

  enqueue(reply: FakeReplyInput | FakeReplyInput[], target: EnqueueTarget = {}): void {
    for (const one of Array.isArray(reply) ? reply : [reply]) this.queue.push({ reply: toReply(one), target });
  }

  pending(): number {
    return this.queue.length;
  }

  setHandler(handler: FakeReplyHandler | undefined): void {
    this.handler = handler;
  }

  waitForRequests(n: number, timeoutMs = 5000): Promise<RecordedRequest[]> {
    return this.waitFor(() => this.requests.length >= n, timeoutMs, `${n} request(s)`);
  }

  waitForIdle(timeoutMs = 5000): Promise<RecordedRequest[]> {
    return this.waitFor(() => this.requests.every((r) => r.endedAt !== undefined), timeoutMs, "all requests to end");
  }

  reset(): void {
    this.requests.length = 0;
    this.otherRequests.length = 0;
    this.queue = [];
    this.handler = undefined;
  }

  async close(): Promise<void> {
    const closed = new Promise<void>((resolve) => this.server.close(() => resolve()));
    this.server.closeAllConnections();
    await closed;
  }

  private waitFor(done: () => boolean, timeoutMs: number, what: string): Promise<RecordedRequest[]> {
    return new Promise((resolve, reject) => {
      const check = (): void => {
        if (!done()) return;
        cleanup();
        resolve(this.requests);
      };
      const timer = setTimeout(() => {
        cleanup();
        reject(new Error(`fake model: timed out after ${timeoutMs} ms waiting for ${what} (have ${this.requests.length})`));
      }, timeoutMs);
      const cleanup = (): void => {
        clearTimeout(timer);
        this.listeners.delete(check);
      };
      this.listeners.add(check);
      check();
    });
  }

  private changed(): void {
    for (const listener of [...this.listeners]) listener();
  }

  newId = (prefix: string): string => `${prefix}${(++this.nextId).toString().padStart(4, "0")}`;

  async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const w = new ResponseWriter(res);
    const url = new URL(req.url ?? "/", "http://fake");
    const route = routeOf(req.method ?? "GET", url.pathname);
    if (route === "anthropic" || route === "chat" || route === "responses") return this.modelCall(route, req, w);
    const headers = flatHeaders(req);
    this.otherRequests.push({ method: req.method ?? "GET", url: req.url ?? "/", headers, at: Date.now() });
    await readBody(req);
    if (route === "probe") return w.text(200, req.method === "HEAD" ? "" : "ok");
    if (route === "count_tokens") return w.json(200, { input_tokens: 10 });
    if (route === "models") return w.json(200, this.modelList());
    w.json(404, { type: "error", error: { type: "not_found_error", message: `fake model: no route ${req.method} ${url.pathname}` } });
  }

  private modelList(): Record<string, unknown> {
    const data = this.models.map((id) => ({ id, object: "model", type: "model", created: 1_700_000_000, created_at: "2024-01-01T00:00:00Z", display_name: id, owned_by: "fake" }));
    return { object: "list", data, has_more: false, first_id: this.models[0] ?? null, last_id: this.models.at(-1) ?? null };
  }

  private async modelCall(api: FakeApi, req: IncomingMessage, w: ResponseWriter): Promise<void> {
    const startedAt = Date.now();
    const body = parseJsonObject(await readBody(req));
    if (!body) {
      const error = api === "anthropic" ? anthropicErrorBody("invalid_request_error", "fake model: body is not a JSON object") : openaiErrorBody("invalid_request_error", "fake model: body is not a JSON object");
      return w.json(400, error);
    }
    const record = this.record(api, req, body, startedAt);
    try {
      const chosen = await this.choose(record);
      record.source = chosen.source;
      record.reply = chosen.reply;
      const ctx: WireContext = { w, model: record.model ?? "fake-model", newId: this.newId };
      await answer(api, body, chosen.reply, ctx);
    } catch (error) {
      if (!(error instanceof ClientGoneError)) failRequest(w, api, error);
    } finally {
      record.aborted = w.aborted;
      record.status = w.status;
      record.endedAt = Date.now();
      this.changed();
    }
  }

  private record(api: FakeApi, req: IncomingMessage, body: Record<string, unknown>, startedAt: number): RecordedRequest {
    const headers = flatHeaders(req);
    const url = req.url ?? "/";
    const record: RecordedRequest = {
      index: this.requests.length,
      api,
      method: req.method ?? "POST",
      path: url.split("?")[0] ?? url,
      url,
      headers,
      body,
      apiKey: apiKeyOf(headers),
      model: typeof body.model === "string" ? body.model : undefined,
      stream: body.stream === true,
      script: extractScriptInput(api, body),
      startedAt,
      aborted: false,
    };
    this.requests.push(record);
    this.changed();
    return record;
  }

  private async choose(record: RecordedRequest): Promise<{ source: "queue" | "handler" | "script"; reply: FakeReply }> {
    const at = this.queue.findIndex((q) => matches(q.target, record.api, record.apiKey));
    const queued = at >= 0 ? this.queue.splice(at, 1)[0] : undefined;
    if (queued) return { source: "queue", reply: queued.reply };
    const handled = this.handler ? await this.handler(record) : undefined;
    if (handled !== undefined) return { source: "handler", reply: toReply(handled) };
    return { source: "script", reply: interpretScript(record.script) };
  }
}

function parseJsonObject(text: string): Record<string, unknown> | undefined {
  try {
    const value: unknown = JSON.parse(text);
    return typeof value === "object" && value !== null && !Array.isArray(value) ? (value as Record<string, unknown>) : undefined;
  } catch {
    return undefined;
  }
}

/** A handler threw or a writer failed: answer 500 if nothing was sent yet, else cut the stream. */
function failRequest(w: ResponseWriter, api: FakeApi, error: unknown): void {
  const message = `fake model: ${error instanceof Error ? error.message : String(error)}`;
  try {
    w.json(500, api === "anthropic" ? anthropicErrorBody("api_error", message) : openaiErrorBody("server_error", message));
  } catch {
    w.destroy();
  }
}

export async function startFakeModelServer(options: FakeModelServerOptions = {}): Promise<FakeModelServer> {
  const server = createServer();
  const fake = new FakeModel(server, options.handler, options.models ?? DEFAULT_MODELS);
  server.on("request", (req, res) => {
    fake.handle(req, res).catch(() => res.destroy());
  });
  const host = options.host ?? "127.0.0.1";
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(options.port ?? 0, host, () => resolve());
  });
  const { port } = server.address() as AddressInfo;
  fake.port = port;
  fake.url = `http://${host}:${port}`;
  fake.baseURL = `${fake.url}/v1`;
  return fake;
}
