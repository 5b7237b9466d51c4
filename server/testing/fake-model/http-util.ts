import type { IncomingMessage } from "node:http";
import * as zlib from "node:zlib";

/** Small node:http helpers: body reading (with content-encoding), header flattening, routing. */

type Decoder = (input: Buffer) => Buffer;

function decoderFor(encoding: string | undefined): Decoder | undefined {
  if (encoding === "gzip") return zlib.gunzipSync;
  if (encoding === "deflate") return zlib.inflateSync;
  if (encoding === "br") return zlib.brotliDecompressSync;
  const zstd = (zlib as unknown as Record<string, Decoder | undefined>).zstdDecompressSync;
  if (encoding === "zstd" && zstd) return zstd;
  return undefined;
}

export async function readBody(req: IncomingMessage): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  const raw = Buffer.concat(chunks);
  const decode = decoderFor(req.headers["content-encoding"]?.toLowerCase());
  return (decode ? decode(raw) : raw).toString("utf8");
}

export function flatHeaders(req: IncomingMessage): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [name, value] of Object.entries(req.headers)) {
    if (value !== undefined) out[name] = Array.isArray(value) ? value.join(", ") : value;
  }
  return out;
}

/** `x-api-key`, else the bearer token of `authorization`. */
export function apiKeyOf(headers: Record<string, string>): string | undefined {
  if (headers["x-api-key"]) return headers["x-api-key"];
  return /^bearer\s+(.+)$/i.exec(headers.authorization ?? "")?.[1];
}

export type Route = "probe" | "models" | "count_tokens" | "anthropic" | "chat" | "responses" | "not_found";

/** Routes with or without the `/v1` prefix; the query string is ignored. */
export function routeOf(method: string, pathname: string): Route {
  const path = pathname.replace(/^\/v1(?=\/|$)/, "").replace(/\/+$/, "") || "/";
  if (method === "HEAD" || (method === "GET" && path === "/")) return "probe";
  if (method === "GET" && path === "/models") return "models";
  if (method !== "POST") return "not_found";
  if (path === "/messages") return "anthropic";
  if (path === "/messages/count_tokens") return "count_tokens";
  if (path === "/chat/completions") return "chat";
  if (path === "/responses") return "responses";
  return "not_found";
}
