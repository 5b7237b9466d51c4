import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import type { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { ResourceUpdatedNotificationSchema } from "@modelcontextprotocol/sdk/types.js";
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createSwitchyardClient } from "../client";
import { startAgentsWorld, waitForAgent, type AgentsWorld } from "../testing/agents-world";
import { fakeAgentPrompt, type FakeAgentStep } from "../testing/fake-agent";
import { removeHome, tempHome } from "../testing/server-harness";
import { call, connectHttp, connectStdio } from "../testing/mcp-client";
import { answerRunRequest, continueRun, getRun, startRun } from "./tools/runs";

/**
 * Resource subscriptions with the SDK's own client, over an HTTP session and over stdio, against
 * the real server: an agent's log and a run's timeline grow (the fake agent, a run on the fake
 * model), `notifications/resources/updated` arrives (coalesced: not one per output chunk), a read
 * shows what is new, unsubscribe stops them. An agent's token subscribes to what it may read and
 * is refused the rest. Then the sessions themselves: ids, DELETE, unknown ids, the per-agent bound.
 */

const TOKEN = "mcp-subscriptions-test-token-0123456789";
const MODEL = "anthropic/claude-sonnet-4-5";
let w: AgentsWorld;
let cwd: string;
let flags: string;

beforeAll(async () => {
  w = await startAgentsWorld({ env: { SWITCHYARD_TOKEN: TOKEN } });
  cwd = tempHome("switchyard-mcp-subs-");
  flags = tempHome("switchyard-mcp-flags-");
  mkdirSync(join(cwd, "strategies"));
  writeFileSync(
    join(cwd, "strategies", "human.yaml"),
    `name: Human\nversion: "1.0"\nagents:\n  human: {type: user, config: {presetMessage: "Your topic?"}}\n  echo: {model: ${MODEL}}\nflow: {type: sequential, steps: [{agent: human}, {agent: echo}]}\n`,
  );
});
afterAll(async () => {
  await w?.stop();
  for (const dir of [cwd, flags]) if (dir) removeHome(dir);
});

/** Every resources/updated notification the client gets, with when it came. */
function updatesOf(client: Client): Array<{ uri: string; at: number }> {
  const seen: Array<{ uri: string; at: number }> = [];
  client.setNotificationHandler(ResourceUpdatedNotificationSchema, (n) => void seen.push({ uri: n.params.uri, at: Date.now() }));
  return seen;
}

async function until(what: string, check: () => boolean | Promise<boolean>, ms = 30_000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await sleep(50);
  }
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const textOf = (r: { contents: object[] }) => String((r.contents[0] as { text?: unknown } | undefined)?.text ?? "");
const outputHas = async (agentId: string, text: string) => JSON.stringify((await w.t.client.agents.output.query({ agentId, limit: 50 })).lines).includes(text);

describe.each(["http", "stdio"] as const)("resource subscriptions over %s", (transport) => {
  let client: Client;
  beforeAll(async () => {
    client = transport === "http" ? await connectHttp(w.t.url, { token: TOKEN }) : (await connectStdio(w.t.url, { token: TOKEN })).client;
  });
  afterAll(() => client?.close());

  it("advertises subscribe: true (listChanged: false), in a session", () => {
    expect(client.getServerCapabilities()?.resources).toEqual({ subscribe: true, listChanged: false });
    if (transport === "http") expect((client.transport as StreamableHTTPClientTransport).sessionId).toMatch(/^[0-9a-f-]{36}$/);
  });

  it("an agent's log: updates while it grows, coalesced; a read shows the new lines; none after unsubscribe", async () => {
    const go = (n: number) => join(flags, `${transport}-log-go${n}`);
    const steps: FakeAgentStep[] = [{ text: "before subscribing" }, { waitFile: go(1) }, { lines: { count: 400, perSecond: 200 } }, { text: "after the burst" }, { waitFile: go(2) }, { text: "after unsubscribing" }, { done: "grown" }];
    const agent = await w.t.client.agents.spawn.mutate({ provider: "fake", repo: w.repo, prompt: fakeAgentPrompt("grow", steps) });
    await until("the first line", () => outputHas(agent.id, "before subscribing"));
    // and whatever it wrote with that line is persisted too (a loaded machine persists it in more than one chunk)
    await until("a quiet log", async () => {
      const a = (await w.t.client.agents.get.query({ agentId: agent.id })).lineCount;
      await sleep(500);
      return (await w.t.client.agents.get.query({ agentId: agent.id })).lineCount === a;
    });
    const updates = updatesOf(client);
    const uri = `switchyard://agents/${agent.alias}/log`;
    await client.subscribeResource({ uri });
    await sleep(400);
    expect(updates).toEqual([]); // nothing new yet

    const { lastId: before } = await w.t.client.events.count.query({});
    writeFileSync(go(1), "");
    await until("the burst", () => outputHas(agent.id, "after the burst"));
    // the first notification at once, the trailing one after the burst (a loaded machine may take a while)
    await until("the trailing notification", () => updates.length >= 2, 5_000);
    await sleep(600);
    expect(new Set(updates.map((u) => u.uri))).toEqual(new Set([uri]));
    for (let i = 1; i < updates.length; i++) expect(updates[i]!.at - updates[i - 1]!.at).toBeGreaterThanOrEqual(200);
    // coalesced: fewer notifications than the output chunks that made them (~20 in two seconds)
    const chunks = (await w.t.client.events.list.query({ afterId: before, scope: { kind: "agent", id: agent.id }, limit: 5000 })).events.filter((e) => e.type === "agent.output_produced");
    expect(chunks.length).toBeGreaterThan(updates.length);
    expect(updates.length).toBeLessThanOrEqual(Math.ceil((updates.at(-1)!.at - updates[0]!.at) / 250) + 2);

    const read = textOf(await client.readResource({ uri }));
    expect(read).toContain("text: after the burst");
    expect(read).toMatch(/line 399 x+/);

    await client.unsubscribeResource({ uri });
    const seen = updates.length;
    writeFileSync(go(2), "");
    await until("the last line", () => outputHas(agent.id, "after unsubscribing"));
    await sleep(700);
    expect(updates.length).toBe(seen);
    await waitForAgent(w.t.client, agent.id, ["idle"]);
  });

  it("a run's timeline: an update when the run moves on (not per streamed delta); the read shows it; none after unsubscribe", async () => {
    const started = await call(client, startRun, { strategy: "human", cwd, input: "", wait: true, timeoutSeconds: 30 });
    expect(started).toMatchObject({ status: "running", needsHuman: true });
    const updates = updatesOf(client);
    const uri = `switchyard://runs/${started.run.runId}/timeline`;
    await client.subscribeResource({ uri });
    await sleep(300);
    expect(updates).toEqual([]);

    const request = started.run.pendingRequests[0]!;
    await call(client, answerRunRequest, { runId: started.run.runId, requestId: request.requestId, text: "LONG[3000] DELAY[1]" });
    expect(await call(client, getRun, { runId: started.run.runId, wait: true, timeoutSeconds: 30 })).toMatchObject({ status: "completed" });
    await until("an update", () => updates.length > 0, 5_000);
    await sleep(400);
    expect(new Set(updates.map((u) => u.uri))).toEqual(new Set([uri]));
    const streamed = (await w.t.client.runs.timeline.query({ runId: started.run.runId, limit: 5000 })).events.filter((e) => e.type === "run.agent_streamed");
    expect(streamed.length).toBeGreaterThan(updates.length);

    const page = JSON.parse(textOf(await client.readResource({ uri }))) as { events: Array<{ type: string }> };
    expect(page.events.map((e) => e.type)).toContain("run.completed");

    await client.unsubscribeResource({ uri });
    const seen = updates.length;
    expect(await call(client, continueRun, { runId: started.run.runId, input: "SAY[again]", wait: true, timeoutSeconds: 30 })).toMatchObject({ status: "completed" });
    await sleep(600);
    expect(updates.length).toBe(seen);
  });

  it("refuses what cannot be followed: an unknown run or agent, a URI that is not a timeline or a log", async () => {
    await expect(client.subscribeResource({ uri: "switchyard://runs/no-such-run/timeline" })).rejects.toThrow(/RUN_NOT_FOUND/);
    await expect(client.subscribeResource({ uri: "switchyard://agents/no-such-agent/log" })).rejects.toThrow(/AGENT_NOT_FOUND/);
    await expect(client.subscribeResource({ uri: "switchyard://inbox" })).rejects.toThrow(/BAD_INPUT/);
  });
});

describe("an agent's token subscribes to what it may read, and nothing else", () => {
  it("its own log and its child's, over /mcp/agents/:id and stdio; another agent's log and any run are AGENT_FORBIDDEN; its resource list holds its family", async () => {
    const go = join(flags, "scoped-go");
    const a = await w.t.client.agents.spawn.mutate({ provider: "fake", repo: w.repo, prompt: fakeAgentPrompt("token", [{ bash: 'printf %s "$SWITCHYARD_TOKEN" > .switchyard/token' }, { waitFile: go }, { text: "own line" }, { hang: true }]) });
    const b = await w.t.client.agents.spawn.mutate({ provider: "fake", repo: w.repo, prompt: fakeAgentPrompt("other", [{ hang: true }]) });
    const tokenFile = join(a.workspacePath, ".switchyard", "token");
    await until("the agent's token", () => readQuiet(tokenFile).length > 10);
    const agentToken = readQuiet(tokenFile);
    const run = (await w.t.client.runs.list.query({})).items[0]!;
    // a child it spawns with its own token is its family: its log is readable, so subscribable
    const child = await createSwitchyardClient({ url: w.t.url, token: agentToken }).agents.spawn.mutate({ provider: "fake", repo: w.repo, prompt: fakeAgentPrompt("child", [{ hang: true }]) });

    const http = await connectHttp(w.t.url, { path: `/mcp/agents/${a.id}`, token: agentToken });
    const stdio = (await connectStdio(w.t.url, { token: agentToken, agentId: a.id })).client;
    for (const client of [http, stdio]) {
      expect(client.getServerCapabilities()?.resources?.subscribe).toBe(true);
      await expect(client.subscribeResource({ uri: `switchyard://agents/${b.id}/log` })).rejects.toThrow(/AGENT_FORBIDDEN/);
      await expect(client.subscribeResource({ uri: `switchyard://runs/${run.runId}/timeline` })).rejects.toThrow(/AGENT_FORBIDDEN/);
      await expect(client.readResource({ uri: `switchyard://agents/${b.id}/log` })).rejects.toThrow(/AGENT_FORBIDDEN/);
      const listed = (await client.listResources()).resources.map((r) => r.uri);
      expect(listed.sort()).toEqual([`switchyard://agents/${a.id}/log`, `switchyard://agents/${child.id}/log`].sort());
      await client.subscribeResource({ uri: `switchyard://agents/${child.alias}/log` });
      await client.subscribeResource({ uri: `switchyard://agents/${a.id}/log` });
    }
    const httpUpdates = updatesOf(http);
    const stdioUpdates = updatesOf(stdio);
    writeFileSync(go, "");
    const own = `switchyard://agents/${a.id}/log`;
    await until("both clients' updates", () => httpUpdates.some((u) => u.uri === own) && stdioUpdates.some((u) => u.uri === own), 15_000);
    expect(textOf(await http.readResource({ uri: own }))).toContain("text: own line");
    for (const u of [...httpUpdates, ...stdioUpdates]) expect([own, `switchyard://agents/${child.alias}/log`]).toContain(u.uri);
    await http.close();
    await stdio.close();
    for (const id of [child.id, a.id, b.id]) await w.t.client.agents.stop.mutate({ agentId: id });
  });
});

describe("HTTP sessions", () => {
  const headers = (token = TOKEN, extra: Record<string, string> = {}) => ({ "content-type": "application/json", accept: "application/json, text/event-stream", authorization: `Bearer ${token}`, ...extra });
  const initialize = (token = TOKEN, path = "/mcp") =>
    fetch(`${w.t.url}${path}`, { method: "POST", headers: headers(token), body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "initialize", params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "t", version: "1" } } }) });
  const rpc = (sessionId: string, method: string, params: unknown, path = "/mcp") =>
    fetch(`${w.t.url}${path}`, { method: "POST", headers: headers(TOKEN, { "mcp-session-id": sessionId }), body: JSON.stringify({ jsonrpc: "2.0", id: 2, method, params }) });
  const stream = (sessionId: string | undefined, token = TOKEN, path = "/mcp") =>
    fetch(`${w.t.url}${path}`, { headers: { accept: "text/event-stream", authorization: `Bearer ${token}`, ...(sessionId ? { "mcp-session-id": sessionId } : {}) } });

  it("an initialize opens one (subscribe: true); DELETE ends it; unknown ids: tools still served, GET/DELETE/subscribe 404", async () => {
    const init = await initialize();
    expect(init.status).toBe(200);
    const id = init.headers.get("mcp-session-id")!;
    expect(id).toMatch(/^[0-9a-f-]{36}$/);
    const answer = JSON.parse((await init.text()).split("\n").find((l) => l.startsWith("data:"))!.slice(5)) as { result: { capabilities: unknown } };
    expect(answer.result.capabilities).toEqual({ tools: { listChanged: false }, resources: { subscribe: true, listChanged: false } });

    const open = await stream(id);
    expect(open.status).toBe(200);
    expect(open.headers.get("content-type")).toContain("text/event-stream");
    await open.body?.cancel();
    expect((await stream(undefined)).status).toBe(405);
    expect((await fetch(`${w.t.url}/mcp`, { method: "DELETE", headers: { authorization: `Bearer ${TOKEN}`, "mcp-session-id": id } })).status).toBe(200);
    expect((await stream(id)).status).toBe(404);

    // a session this server does not know (ended, restarted, another server's): tools keep working
    const listed = await rpc(id, "tools/list", {});
    expect(listed.status).toBe(200);
    expect(await listed.text()).toContain('"name":"spawn_agent"');
    expect((await rpc(id, "resources/subscribe", { uri: "switchyard://agents/x/log" })).status).toBe(404);
    expect((await fetch(`${w.t.url}/mcp`, { method: "DELETE", headers: { authorization: `Bearer ${TOKEN}`, "mcp-session-id": id } })).status).toBe(404);
  });

  it("a session belongs to the token and the path that opened it; an agent token keeps at most 4", async () => {
    const agent = await w.t.client.agents.spawn.mutate({ provider: "fake", repo: w.repo, prompt: fakeAgentPrompt("token", [{ bash: 'printf %s "$SWITCHYARD_TOKEN" > .switchyard/token' }, { hang: true }]) });
    const tokenFile = join(agent.workspacePath, ".switchyard", "token");
    await until("the agent's token", () => readQuiet(tokenFile).length > 10);
    const agentToken = readQuiet(tokenFile);
    const path = `/mcp/agents/${agent.id}`;

    const ids: string[] = [];
    for (let i = 0; i < 5; i++) ids.push((await initialize(agentToken, path)).headers.get("mcp-session-id")!);
    expect(new Set(ids).size).toBe(5);
    const first = await stream(ids[0], agentToken, path);
    expect(first.status).toBe(404); // the fifth ended the least recently used
    const last = await stream(ids[4], agentToken, path);
    expect(last.status).toBe(200);
    await last.body?.cancel();
    // the same id with the server token, or on /mcp: unknown
    expect((await stream(ids[3], TOKEN, path)).status).toBe(404);
    expect((await stream(ids[3], agentToken, "/mcp")).status).toBe(404);
    await w.t.client.agents.stop.mutate({ agentId: agent.id });
  });
});

function readQuiet(path: string): string {
  try {
    return readFileSync(path, "utf8");
  } catch {
    return "";
  }
}
