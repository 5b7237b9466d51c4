import { request } from "node:http";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestServer, type TestServer } from "../testing/server-harness";
import { call, connectHttp, connectStdio } from "../testing/mcp-client";
import { listStrategies } from "./tools/runs";

/**
 * `/mcp` sits behind the same guard as everything else (Host, Origin, token, before routing),
 * and the stdio server needs the token to reach a server that has one.
 */

const TOKEN = "mcp-guard-test-token-0123456789";
let t: TestServer;

beforeAll(async () => {
  t = await startTestServer({ env: { SWITCHYARD_TOKEN: TOKEN } });
});
afterAll(() => t?.stop());

const INITIALIZE = JSON.stringify({ jsonrpc: "2.0", id: 1, method: "initialize", params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "t", version: "1" } } });
const post = (headers: Record<string, string>, path = "/mcp") =>
  fetch(`${t.url}${path}`, { method: "POST", headers: { "content-type": "application/json", accept: "application/json, text/event-stream", ...headers }, body: INITIALIZE });

describe("the /mcp guard", () => {
  it("without the token: 401, for /mcp and /mcp/agents/:id; the SDK client cannot connect", async () => {
    expect((await post({})).status).toBe(401);
    expect((await post({}, "/mcp/agents/anything")).status).toBe(401);
    expect((await post({ authorization: "Bearer not-the-token-at-all" })).status).toBe(401);
    await expect(connectHttp(t.url)).rejects.toThrow(/401|Unauthorized/i);
  });

  it("a foreign Origin or Host: 403, even with the token", async () => {
    const auth = { authorization: `Bearer ${TOKEN}` };
    expect((await post({ ...auth, origin: "https://evil.example" })).status).toBe(403);
    expect((await post({ ...auth, origin: `http://127.0.0.1:${t.port + 1}` })).status).toBe(403);
    // fetch will not send another Host: a raw request does (a DNS-rebinding page would)
    const status = await new Promise<number | undefined>((resolve, reject) => {
      const req = request(`${t.url}/mcp`, { method: "POST", headers: { ...auth, host: `evil.example:${t.port}`, "content-type": "application/json", accept: "application/json, text/event-stream" } }, (res) => {
        res.resume();
        resolve(res.statusCode);
      });
      req.on("error", reject);
      req.end(INITIALIZE);
    });
    expect(status).toBe(403);
    // the server's own origin passes
    expect((await post({ ...auth, origin: t.url })).status).toBe(200);
  });

  it("with the token: the protocol; an initialize opens a session, anything else without one is stateless; GET and DELETE without one are 405", async () => {
    const res = await post({ authorization: `Bearer ${TOKEN}` });
    expect(res.status).toBe(200);
    expect(res.headers.get("mcp-session-id")).toMatch(/^[0-9a-f-]{36}$/);
    const body = await res.text();
    expect(body).toContain('"serverInfo":{"name":"switchyard"');
    const list = await fetch(`${t.url}/mcp`, {
      method: "POST",
      headers: { "content-type": "application/json", accept: "application/json, text/event-stream", authorization: `Bearer ${TOKEN}` },
      body: JSON.stringify({ jsonrpc: "2.0", id: 2, method: "tools/list" }),
    });
    expect(list.status).toBe(200);
    expect(list.headers.get("mcp-session-id")).toBeNull();
    expect(await list.text()).toContain('"name":"list_strategies"');
    for (const method of ["GET", "DELETE"]) expect((await fetch(`${t.url}/mcp`, { method, headers: { authorization: `Bearer ${TOKEN}` } })).status).toBe(405);
    const client = await connectHttp(t.url, { token: TOKEN });
    expect(client.getServerVersion()).toMatchObject({ name: "switchyard" });
    expect((await call(client, listStrategies)).strategies.length).toBeGreaterThan(0);
    await client.close();
  });

  it("stdio: with the token the tools work; without it each call is an UNAUTHORIZED tool error", async () => {
    const good = await connectStdio(t.url, { token: TOKEN });
    expect((await call(good.client, listStrategies)).strategies.length).toBeGreaterThan(0);
    await good.client.close();

    const bad = await connectStdio(t.url);
    const r = await bad.client.callTool({ name: "list_strategies", arguments: {} });
    expect(r.isError).toBe(true);
    expect(JSON.stringify(r.content)).toMatch(/^\[\{"type":"text","text":"UNAUTHORIZED: The Switchyard server refused the call: Authentication required/);
    await bad.client.close();

    const nobody = await connectStdio("http://127.0.0.1:9");
    const down = await nobody.client.callTool({ name: "list_agents", arguments: {} });
    expect(down.isError).toBe(true);
    expect(JSON.stringify(down.content)).toMatch(/SERVER_UNREACHABLE: The Switchyard server does not answer/);
    expect(nobody.stderr()).toMatch(/does not answer yet/);
    await nobody.client.close();
  });
});
