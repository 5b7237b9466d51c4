import { request as httpRequest, type IncomingMessage, type RequestOptions } from "node:http";

/**
 * The fetch the CLI's queries and mutations go through: node:http, not Node's global fetch.
 * A process's first global fetch loads undici and compiles its WASM HTTP parser, ~100 ms: more
 * than all the rest of `yard health`. node:http is part of Node's startup snapshot.
 *
 * Enough of fetch for tRPC's httpBatchLink (method, headers, a string body, an abort signal; the
 * response's ok, status, headers, text and json). A request that cannot be sent fails as fetch's
 * does, `TypeError("fetch failed")` with the socket error as its cause (ECONNREFUSED...), so
 * "cannot reach the server" reads the same either way.
 */

export type HttpInit = {
  method?: string;
  headers?: HeadersInit;
  body?: unknown;
  signal?: AbortSignal | null;
};

export type HttpResponse = {
  readonly ok: boolean;
  readonly status: number;
  readonly statusText: string;
  readonly url: string;
  readonly headers: { get(name: string): string | null };
  readonly body: null;
  text(): Promise<string>;
  json(): Promise<unknown>;
};

/** A header value as fetch's Headers.get gives it: repeated headers joined by ", ". */
function headerOf(res: IncomingMessage, name: string): string | null {
  const v = res.headers[name.toLowerCase()];
  if (v === undefined) return null;
  return Array.isArray(v) ? v.join(", ") : v;
}

/** Headers as a plain object (a Headers instance is iterable; building one would load undici). */
function headersOf(init: HeadersInit | undefined): Record<string, string> {
  if (init === undefined) return {};
  if (Array.isArray(init) || Symbol.iterator in init) return Object.fromEntries(init as Iterable<[string, string]>);
  return { ...init };
}

function responseOf(url: string, res: IncomingMessage, text: string): HttpResponse {
  const status = res.statusCode ?? 0;
  return {
    ok: status >= 200 && status < 300,
    status,
    statusText: res.statusMessage ?? "",
    url,
    headers: { get: (name) => headerOf(res, name) },
    body: null,
    text: () => Promise.resolve(text),
    json: async () => JSON.parse(text) as unknown,
  };
}

export async function httpFetch(input: string | URL | { url: string }, init: HttpInit = {}): Promise<HttpResponse> {
  const url = new URL(typeof input === "string" || input instanceof URL ? input : input.url);
  if (url.protocol !== "http:" && url.protocol !== "https:") throw new TypeError(`fetch failed: unsupported protocol ${url.protocol}`);
  const send = url.protocol === "https:" ? (await import("node:https")).request : httpRequest;
  const body = init.body === undefined || init.body === null ? undefined : typeof init.body === "string" ? init.body : undefined;
  if (init.body !== undefined && init.body !== null && body === undefined) throw new TypeError("fetch failed: only string bodies are supported");
  const headers = headersOf(init.headers);
  if (body !== undefined) headers["content-length"] = String(Buffer.byteLength(body));
  const options: RequestOptions = { method: init.method ?? "GET", headers };
  const signal = init.signal ?? undefined;
  signal?.throwIfAborted();
  return await new Promise<HttpResponse>((resolve, reject) => {
    const req = send(url, options, (res) => {
      const chunks: Buffer[] = [];
      res.on("data", (c: Buffer) => chunks.push(c));
      res.on("end", () => resolve(responseOf(url.href, res, Buffer.concat(chunks).toString("utf8"))));
      res.on("error", (err) => reject(new TypeError("fetch failed", { cause: err })));
    });
    const onAbort = () => req.destroy(signal?.reason instanceof Error ? signal.reason : new DOMException("This operation was aborted", "AbortError"));
    signal?.addEventListener("abort", onAbort, { once: true });
    req.on("close", () => signal?.removeEventListener("abort", onAbort));
    req.on("error", (err) => reject(signal?.aborted ? signal.reason : new TypeError("fetch failed", { cause: err })));
    req.end(body);
  });
}

/**
 * GET a plain JSON route of the server (`/health`) with its token. A refusal (401, 403...) is an
 * error carrying the server's message ({error, message}, as the request guard answers).
 */
export async function getJson(url: string, token: string | undefined): Promise<unknown> {
  const res = await httpFetch(url, { headers: token ? { authorization: `Bearer ${token}` } : {} });
  const text = await res.text();
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch {
    throw new Error(`${url} answered ${res.status} ${res.statusText} with no JSON`);
  }
  if (res.ok) return body;
  const message = typeof body === "object" && body !== null && "message" in body && typeof body.message === "string" ? body.message : `${res.status} ${res.statusText}`;
  throw new Error(message);
}
