import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import WebSocket from "ws";
import { Health } from "../../shared/api";
import { removeHome, startTestServer, tempHome, type TestServer } from "../testing/server-harness";

let t: TestServer;
let webDir: string;

beforeAll(async () => {
  webDir = join(tempHome("switchyard-web-"), "web");
  mkdirSync(join(webDir, "assets"), { recursive: true });
  writeFileSync(join(webDir, "index.html"), "<!doctype html><title>Switchyard</title><div id=root>app-shell</div>");
  writeFileSync(join(webDir, "assets", "app-abc123.js"), "console.log(1)");
  t = await startTestServer({ env: { SWITCHYARD_WEB_DIR: webDir } });
});

afterAll(async () => {
  await t.stop();
  removeHome(t.home);
});

describe("HTTP surface", () => {
  it("GET /health answers the documented shape", async () => {
    const res = await fetch(`${t.url}/health`);
    expect(res.status).toBe(200);
    const body = Health.parse(await res.json());
    expect(body.status).toBe("ok");
    expect(body.uptime).toBeGreaterThanOrEqual(0);
    expect(body.activeRuns).toBe(0);
  });

  it("serves the dashboard at / and falls back to it on client routes", async () => {
    for (const path of ["/", "/runs", "/runs/abc", "/agents", "/agents/x/y", "/daemons", "/inbox", "/accounts", "/workers"]) {
      const res = await fetch(`${t.url}${path}`);
      expect(res.status, path).toBe(200);
      expect(await res.text(), path).toContain("app-shell");
    }
    const asset = await fetch(`${t.url}/assets/app-abc123.js`);
    expect(asset.status).toBe(200);
    expect(asset.headers.get("cache-control")).toContain("immutable");
  });

  it("answers 404 for any other unknown path", async () => {
    for (const path of ["/nope", "/runsx", "/api/whatever", "/assets/missing.js"]) {
      const res = await fetch(`${t.url}${path}`);
      expect(res.status, path).toBe(404);
      expect(await res.text()).toBe("Not Found");
    }
  });

  it("a browser asking for an unknown page gets the dashboard (its own not-found page) with status 404", async () => {
    const accept = "text/html,application/xhtml+xml,*/*;q=0.8";
    for (const path of ["/nope", "/runsx", "/a/b/c"]) {
      const res = await fetch(`${t.url}${path}`, { headers: { accept } });
      expect(res.status, path).toBe(404);
      expect(await res.text(), path).toContain("app-shell");
    }
    for (const path of ["/trpc/nope", "/assets/missing.js", "/api/whatever"]) {
      const res = await fetch(`${t.url}${path}`, { headers: { accept } });
      expect(res.status, path).toBe(404);
      expect(await res.text(), path).not.toContain("app-shell");
    }
  });

  it("GET /ws without an upgrade is a 400, as the reference daemon answers", async () => {
    const res = await fetch(`${t.url}/ws`);
    expect(res.status).toBe(400);
    expect(await res.text()).toBe("WebSocket upgrade failed");
  });

  it("malformed tRPC input gets BAD_REQUEST naming the field, and the server stays up", async () => {
    const input = encodeURIComponent(JSON.stringify({ afterId: "yesterday", limit: 10 }));
    const res = await fetch(`${t.url}/trpc/events.list?input=${input}`);
    expect(res.status).toBe(400);
    const body = (await res.json()) as { error: { message: string; data: { code: string; appCode: string; issues: Array<{ path: string }> } } };
    expect(body.error.data.code).toBe("BAD_REQUEST");
    expect(body.error.data.appCode).toBe("VALIDATION_ERROR");
    expect(body.error.message).toMatch(/^afterId: /);
    expect(body.error.data.issues[0]?.path).toBe("afterId");

    const bad = await fetch(`${t.url}/trpc/events.emit`, { method: "POST", headers: { "content-type": "application/json" }, body: "{not json" });
    expect(bad.status).toBe(400);
    const unknownKey = await t.client.events.emit.mutate({ message: "x", colour: "blue" } as never).catch((e: Error) => e);
    expect(String(unknownKey)).toMatch(/colour/);
    expect((await fetch(`${t.url}/health`)).status).toBe(200);
  });

  it("the typed client streams events: backlog, then live", async () => {
    const { id } = await t.client.events.emit.mutate({ message: "before" });
    const got: Array<{ id: number; type: string }> = [];
    await new Promise<void>((resolve, reject) => {
      const sub = t.client.events.onEvent.subscribe(
        { lastEventId: String(id - 1) },
        {
          onData: (d) => {
            got.push({ id: d.data.id, type: d.data.type });
            if (got.length === 1) void t.client.events.emit.mutate({ message: "after" });
            if (got.length === 2) {
              sub.unsubscribe();
              resolve();
            }
          },
          onError: reject,
        },
      );
    });
    expect(got).toEqual([
      { id, type: "system.noted" },
      { id: id + 1, type: "system.noted" },
    ]);
  });

  it("counts WebSocket clients in /health and answers ping on /ws", async () => {
    const ws = new WebSocket(`${t.url.replace("http", "ws")}/ws`);
    await new Promise((r) => ws.once("open", r));
    const pong = new Promise<Record<string, unknown>>((r) => ws.once("message", (d) => r(JSON.parse(String(d)))));
    ws.send(JSON.stringify({ type: "ping", requestId: "p1" }));
    expect(await pong).toMatchObject({ type: "pong", requestId: "p1" });
    const h = (await (await fetch(`${t.url}/health`)).json()) as Health;
    expect(h.connectedClients).toBeGreaterThanOrEqual(1);
    const err = new Promise<Record<string, unknown>>((r) => ws.once("message", (d) => r(JSON.parse(String(d)))));
    ws.send("{oops");
    expect(await err).toMatchObject({ type: "error", code: "PARSE_ERROR", message: "Invalid JSON" });
    ws.close();
  });
});
