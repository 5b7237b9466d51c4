import { readdirSync, readFileSync, statSync } from "node:fs";
import { request as httpRequest } from "node:http";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import WebSocket from "ws";
import { createServer } from "../app";
import { loadConfig } from "../config";
import { createSwitchyardClient } from "../client";
import { removeHome, spawnServer, startTestServer, storeContents, tempHome, TEST_STORE, type ServerProcess, type TestServer } from "../testing/server-harness";

const TOKEN = "tok-SENTINEL-7f3a9c1e5b2d4f60";
const ANTHROPIC = "sk-ant-SENTINEL-91c2e7d4a8b0";
const OPENAI = "sk-openai-SENTINEL-5e6f7a8b9c0d";

/** Raw HTTP so tests control Host and Origin exactly (fetch forbids setting Host). */
function raw(url: string, path: string, headers: Record<string, string> = {}, method = "GET"): Promise<{ status: number; body: string; headers: Record<string, string | string[] | undefined> }> {
  const u = new URL(url);
  return new Promise((resolve, reject) => {
    const req = httpRequest({ host: u.hostname, port: u.port, path, method, headers }, (res) => {
      let body = "";
      res.on("data", (d) => (body += d));
      res.on("end", () => resolve({ status: res.statusCode ?? 0, body, headers: res.headers }));
    });
    req.on("error", reject);
    req.end();
  });
}

function wsStatus(url: string, headers: Record<string, string> = {}): Promise<number> {
  return new Promise((resolve) => {
    const ws = new WebSocket(`${url.replace("http", "ws")}/ws`, { headers });
    ws.on("open", () => {
      ws.close();
      resolve(101);
    });
    ws.on("unexpected-response", (_req, res) => resolve(res.statusCode ?? 0));
    ws.on("error", () => {});
  });
}

describe("binding", () => {
  it("refuses a non-loopback bind without a token, naming the fix", async () => {
    const config = loadConfig({ SWITCHYARD_HOME: tempHome(), SWITCHYARD_HOST: "0.0.0.0", SWITCHYARD_PORT: "0" });
    await expect(createServer({ config })).rejects.toThrow(/SWITCHYARD_TOKEN/);
  });

  it("treats an empty token as unset", () => {
    const config = loadConfig({ SWITCHYARD_HOME: tempHome(), SWITCHYARD_TOKEN: "  " });
    expect(config.token).toBeUndefined();
  });

  it("a bad value fails at start with a message naming the variable", async () => {
    expect(() => loadConfig({ SWITCHYARD_PORT: "seventy" })).toThrow(/SWITCHYARD_PORT/);
    expect(() => loadConfig({ SWITCHYARD_LOG_LEVEL: "loud" })).toThrow(/SWITCHYARD_LOG_LEVEL/);
    expect(() => loadConfig({ ANTHROPIC_BASE_URL: "not a url" })).toThrow(/ANTHROPIC_BASE_URL/);
    expect(loadConfig({ ANTHROPIC_BASE_URL: "http://127.0.0.1:9/v1/" }).anthropicBaseUrl).toBe("http://127.0.0.1:9");
    expect(loadConfig({ ANTHROPIC_BASE_URL: "http://127.0.0.1:9" }).anthropicBaseUrl).toBe("http://127.0.0.1:9");
  });
});

describe("with a token", () => {
  let t: TestServer;
  beforeAll(async () => {
    t = await startTestServer({ env: { SWITCHYARD_TOKEN: TOKEN } });
  });
  afterAll(async () => {
    await t.stop();
    removeHome(t.home);
  });

  it("answers 401 without a token on HTTP, SSE and WebSocket", async () => {
    expect((await raw(t.url, "/health")).status).toBe(401);
    expect((await raw(t.url, "/trpc/health")).status).toBe(401);
    expect((await raw(t.url, `/trpc/events.onEvent?input=${encodeURIComponent("{}")}`, { accept: "text/event-stream" })).status).toBe(401);
    expect(await wsStatus(t.url)).toBe(401);
    expect(await wsStatus(t.url, { authorization: "Bearer wrong-token-000000" })).toBe(401);
  });

  it("accepts the bearer token everywhere", async () => {
    const auth = { authorization: `Bearer ${TOKEN}` };
    expect((await raw(t.url, "/health", auth)).status).toBe(200);
    expect(await wsStatus(t.url, auth)).toBe(101);
    const h = await t.client.health.query();
    expect(h.status).toBe("ok");
    const unauthenticated = createSwitchyardClient({ url: t.url, token: "" });
    await expect(unauthenticated.health.query()).rejects.toThrow();
  });

  it("a browser without a session is sent to the login page", async () => {
    const res = await raw(t.url, "/runs", { accept: "text/html" });
    expect(res.status).toBe(303);
    expect(res.headers.location).toBe("/login");
    const page = await raw(t.url, "/login", { accept: "text/html" });
    expect(page.status).toBe(401);
    expect(page.body).toContain("SWITCHYARD_TOKEN");
  });

  it("the one-time login link sets a session cookie that works for HTTP, SSE and WebSocket, once", async () => {
    const link = new URL(t.server.loginLink());
    const res = await raw(t.url, `${link.pathname}${link.search}`);
    expect(res.status).toBe(303);
    const setCookie = String(res.headers["set-cookie"]);
    expect(setCookie).toMatch(/HttpOnly/);
    expect(setCookie).toMatch(/SameSite=Strict/);
    expect(setCookie).not.toContain(TOKEN);
    const cookie = setCookie.split(";")[0]!;
    expect((await raw(t.url, "/health", { cookie })).status).toBe(200);
    expect(await wsStatus(t.url, { cookie })).toBe(101);
    const again = await raw(t.url, `${link.pathname}${link.search}`);
    expect(again.status).toBe(401);
  });

  it("refuses a foreign Host (DNS rebinding) and a foreign Origin with 403, even with the token", async () => {
    const auth = { authorization: `Bearer ${TOKEN}` };
    expect((await raw(t.url, "/health", { ...auth, host: "evil.example:7422" })).status).toBe(403);
    expect((await raw(t.url, "/health", { ...auth, origin: "http://evil.example" })).status).toBe(403);
    expect((await raw(t.url, "/health", { ...auth, origin: "null" })).status).toBe(403);
    expect(await wsStatus(t.url, { ...auth, origin: "http://evil.example" })).toBe(403);
    // the server's own origin passes; a request with no Origin (scripts) passes
    expect((await raw(t.url, "/health", { ...auth, origin: t.url })).status).toBe(200);
    expect((await raw(t.url, "/health", auth)).status).toBe(200);
  });
});

describe("without a token on loopback", () => {
  let t: TestServer;
  beforeAll(async () => {
    t = await startTestServer({ env: { SWITCHYARD_ALLOWED_HOSTS: "switchyard.test" } });
  });
  afterAll(async () => {
    await t.stop();
    removeHome(t.home);
  });

  it("still checks Host and Origin", async () => {
    expect((await raw(t.url, "/health")).status).toBe(200);
    expect((await raw(t.url, "/health", { host: "attacker.example" })).status).toBe(403);
    expect((await raw(t.url, "/health", { host: `switchyard.test:${t.port}` })).status).toBe(200);
    expect((await raw(t.url, "/trpc/events.emit", { origin: "http://attacker.example", "content-type": "application/json" }, "POST")).status).toBe(403);
    expect(await wsStatus(t.url, { origin: "http://attacker.example" })).toBe(403);
  });
});

describe("secrets never leak", () => {
  let p: ServerProcess;
  let home: string;
  beforeAll(async () => {
    home = tempHome();
    p = await spawnServer({
      home,
      env: { SWITCHYARD_TOKEN: TOKEN, ANTHROPIC_API_KEY: ANTHROPIC, OPENAI_API_KEY: OPENAI, SWITCHYARD_LOG_LEVEL: "trace" },
    });
  });
  afterAll(async () => {
    await p.kill("SIGKILL");
    removeHome(home);
  });

  it("keeps the token and provider keys out of logs, events, errors and /health", async () => {
    const auth = { authorization: `Bearer ${TOKEN}` };
    const bodies: string[] = [];
    bodies.push((await raw(p.url, "/health", auth)).body);
    bodies.push((await raw(p.url, "/trpc/system.info", auth)).body);
    bodies.push((await raw(p.url, `/trpc/events.list?input=${encodeURIComponent(JSON.stringify({ afterId: TOKEN }))}`, auth)).body);
    bodies.push((await raw(p.url, `/health?token=${TOKEN}`, { authorization: `Bearer ${TOKEN}x` })).body);
    bodies.push((await raw(p.url, `/login?code=${ANTHROPIC}`)).body);
    const client = createSwitchyardClient({ url: p.url, token: TOKEN });
    await client.events.emit.mutate({ message: "hello, nothing secret here" });
    await p.kill("SIGTERM");

    const files: string[] = [];
    const walk = (dir: string) => {
      for (const name of readdirSync(dir)) {
        const path = join(dir, name);
        if (statSync(path).isDirectory()) walk(path);
        else files.push(path);
      }
    };
    walk(home);
    // the store: the SQLite file in the home, or every row of the PostgreSQL database
    const stored = await storeContents(home);
    expect(TEST_STORE === "postgres" ? stored.includes("hello, nothing secret here") : files.some((f) => f.endsWith("switchyard.db"))).toBe(true);
    const haystacks = [p.output(), ...bodies, stored, ...files.map((f) => readFileSync(f).toString("latin1"))];
    expect(p.output()).toContain("Dashboard:");
    for (const secret of [TOKEN, ANTHROPIC, OPENAI]) {
      for (const text of haystacks) expect(text.includes(secret), `secret found in output`).toBe(false);
    }
  });
});
