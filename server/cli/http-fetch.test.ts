import { createServer, type IncomingMessage, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { getJson, httpFetch } from "./http-fetch";

/** The CLI's fetch over node:http answers as the global fetch does, for what tRPC's links use. */
describe("httpFetch", () => {
  let server: Server;
  let base: string;
  const seen: Array<{ method?: string; url?: string; headers: IncomingMessage["headers"]; body: string }> = [];

  beforeAll(async () => {
    server = createServer((req, res) => {
      let body = "";
      req.on("data", (d: Buffer) => (body += d.toString()));
      req.on("end", () => {
        seen.push({ method: req.method, url: req.url, headers: req.headers, body });
        if (req.url === "/hang") return; // never answers
        res.writeHead(req.url === "/missing" ? 404 : 200, { "content-type": "application/json", "x-twice": ["a", "b"] });
        res.end(JSON.stringify({ ok: req.url !== "/missing", echo: body }));
      });
    });
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });

  afterAll(async () => {
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  });

  it("GET: status, headers and the JSON body, with the request's headers sent", async () => {
    const res = await httpFetch(`${base}/trpc/health?input=%7B%7D`, { headers: { authorization: "Bearer t" } });
    expect(res).toMatchObject({ ok: true, status: 200 });
    expect(res.headers.get("Content-Type")).toBe("application/json");
    expect(res.headers.get("x-twice")).toBe("a, b");
    expect(res.headers.get("x-none")).toBeNull();
    expect(await res.json()).toEqual({ ok: true, echo: "" });
    expect(seen.at(-1)).toMatchObject({ method: "GET", url: "/trpc/health?input=%7B%7D", headers: { authorization: "Bearer t" } });
  });

  it("POST: a string body with its length; headers as pairs or a Headers-like iterable", async () => {
    const body = JSON.stringify({ message: "héllo" });
    const res = await httpFetch(new URL(`${base}/trpc/events.emit`), { method: "POST", body, headers: [["content-type", "application/json"]] });
    expect(await res.json()).toEqual({ ok: true, echo: body });
    expect(seen.at(-1)).toMatchObject({ method: "POST", headers: { "content-type": "application/json", "content-length": String(Buffer.byteLength(body)) } });
    await httpFetch(base, { headers: new Map([["x-from", "map"]]) as unknown as HeadersInit });
    expect(seen.at(-1)?.headers["x-from"]).toBe("map");
  });

  it("a non-2xx answer is a response, not an error", async () => {
    const res = await httpFetch(`${base}/missing`);
    expect(res).toMatchObject({ ok: false, status: 404 });
    expect(await res.text()).toBe(JSON.stringify({ ok: false, echo: "" }));
  });

  it("an unreachable server fails as fetch does: TypeError 'fetch failed', the socket error as its cause", async () => {
    const err = (await httpFetch("http://127.0.0.1:9/trpc/health").catch((e: unknown) => e)) as TypeError & { cause?: { code?: string } };
    expect(err).toBeInstanceOf(TypeError);
    expect(err.message).toBe("fetch failed");
    expect(err.cause?.code).toBe("ECONNREFUSED");
  });

  it("an abort signal cancels the request with its reason", async () => {
    const ac = new AbortController();
    const pending = httpFetch(`${base}/hang`, { signal: ac.signal });
    setTimeout(() => ac.abort(), 20);
    await expect(pending).rejects.toMatchObject({ name: "AbortError" });
    await expect(httpFetch(base, { signal: AbortSignal.abort() })).rejects.toMatchObject({ name: "AbortError" });
  });
});

/** `yard health`'s request: GET a plain JSON route with the token; a refusal carries the server's message. */
describe("getJson", () => {
  let server: Server;
  let base: string;
  let authorization: string | undefined;

  beforeAll(async () => {
    server = createServer((req, res) => {
      authorization = req.headers.authorization;
      if (req.url === "/refused") return void res.writeHead(401, { "content-type": "application/json" }).end(JSON.stringify({ error: "UNAUTHORIZED", message: "Authentication required" }));
      if (req.url === "/plain") return void res.writeHead(502, "Bad Gateway").end("upstream down");
      res.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify({ status: "ok" }));
    });
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });

  afterAll(async () => {
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  });

  it("the JSON body, the token sent as a bearer (none without one)", async () => {
    expect(await getJson(`${base}/health`, "tok")).toEqual({ status: "ok" });
    expect(authorization).toBe("Bearer tok");
    await getJson(`${base}/health`, undefined);
    expect(authorization).toBeUndefined();
  });

  it("a refusal is an error with the server's message; an answer without JSON names the status", async () => {
    await expect(getJson(`${base}/refused`, "wrong")).rejects.toThrow(/^Authentication required$/);
    await expect(getJson(`${base}/plain`, undefined)).rejects.toThrow(`${base}/plain answered 502 Bad Gateway with no JSON`);
  });

  it("an unreachable server fails as fetch does (so yard explains it)", async () => {
    await expect(getJson("http://127.0.0.1:9/health", undefined)).rejects.toMatchObject({ message: "fetch failed", cause: { code: "ECONNREFUSED" } });
  });
});
