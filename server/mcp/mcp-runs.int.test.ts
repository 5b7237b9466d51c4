import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startRunsWorld, type RunsWorld } from "../testing/runs-world";
import { call, callError, connectHttp, connectStdio } from "../testing/mcp-client";
import { SWITCHYARD_TOOLS } from "./tools";
import { daemonSnapshot, listDaemons, triggerDaemon } from "./tools/daemons";
import { inbox } from "./tools/inbox";
import { answerRunRequest, continueRun, getRun, listStrategies, startRun, stopRun } from "./tools/runs";

/**
 * The `switchyard` MCP server's run, daemon and inbox tools, driven by the SDK's own client over
 * `/mcp` (Streamable HTTP) and over stdio (`yard mcp`, talking to the server over
 * tRPC): each call's effect is checked through tRPC, each result against its output schema (by
 * the client, from tools/list, and by the tool's zod schema). Then bad input: tool errors, and the
 * server stays up.
 */

const MODEL = "anthropic/claude-sonnet-4-5";
let w: RunsWorld;

beforeAll(async () => {
  w = await startRunsWorld("switchyard-mcp-runs-");
  w.strategy("say", `name: Say\nversion: "1.0"\nagents:\n  a: {model: ${MODEL}, systemPrompt: "SAY[hello from the run]"}\nflow: {type: sequential, steps: [{agent: a}]}\n`);
  w.strategy("human", `name: Human\nversion: "1.0"\nagents:\n  human: {type: user, config: {presetMessage: "Your topic?"}}\n  echo: {model: ${MODEL}}\nflow: {type: sequential, steps: [{agent: human}, {agent: echo}]}\n`);
  w.strategy("long", `name: Long\nversion: "1.0"\nagents:\n  talker: {model: ${MODEL}, systemPrompt: "LONG[100000] DELAY[5]"}\nflow: {type: sequential, steps: [{agent: talker}]}\n`);
  w.strategy("big", `name: Big\nversion: "1.0"\nagents:\n  talker: {model: ${MODEL}, systemPrompt: "LONG[3000]"}\nflow: {type: sequential, steps: [{agent: talker}]}\n`);
});
afterAll(() => w?.stop());

describe.each(["http", "stdio"] as const)("run, daemon and inbox tools over %s", (transport) => {
  let client: Client;
  beforeAll(async () => {
    client = transport === "http" ? await connectHttp(w.t.url) : (await connectStdio(w.t.url, { cwd: w.cwd })).client;
  });
  afterAll(() => client?.close());

  it("lists every tool with a description and input and output schemas", async () => {
    const { tools } = await client.listTools();
    expect(tools.map((t) => t.name).sort()).toEqual(SWITCHYARD_TOOLS.map((t) => t.name).sort());
    expect(tools).toHaveLength(23);
    for (const tool of tools) {
      expect(tool.description?.length, tool.name).toBeGreaterThan(30);
      expect(tool.inputSchema.type, tool.name).toBe("object");
      expect(tool.outputSchema?.type, tool.name).toBe("object");
    }
  });

  it("list_strategies finds the cwd's strategies; start_run with wait returns the result the run stored", async () => {
    const listed = await call(client, listStrategies, { cwd: w.cwd });
    expect(listed.strategies.map((s) => s.id)).toEqual(expect.arrayContaining(["say", "human", "long", "big", "demo"]));
    expect(listed.strategies.find((s) => s.id === "say")).toMatchObject({ name: "Say", source: "cwd", valid: true });
    if (transport === "stdio") {
      // the stdio server's relative paths default to its own cwd: where the client started it
      expect((await call(client, listStrategies, {})).strategies.map((s) => s.id)).toContain("say");
      expect(await call(client, startRun, { strategy: "say", wait: true, timeoutSeconds: 30 })).toMatchObject({ status: "completed", run: { cwd: w.cwd } });
    }

    const started = await call(client, startRun, { strategy: "say", cwd: w.cwd, input: "go", wait: true, timeoutSeconds: 30 });
    expect(started).toMatchObject({ status: "completed", needsHuman: false, run: { status: "completed", result: "hello from the run", strategyName: "Say", input: "go", segment: 1, error: null } });
    const stored = await w.t.client.runs.get.query({ runId: started.run.runId });
    expect(stored).toMatchObject({ status: "completed", result: "hello from the run", cwd: w.cwd });
    expect((await call(client, listStrategies, { cwd: w.cwd })).recentRuns[0]).toMatchObject({ runId: started.run.runId, status: "completed" });

    // continue_run: a second segment on the same run, seen by tRPC
    const continued = await call(client, continueRun, { runId: started.run.runId, input: "once more", wait: true, timeoutSeconds: 30 });
    expect(continued).toMatchObject({ status: "completed", run: { segment: 2, input: "once more", result: "hello from the run" } });
    expect(await w.t.client.runs.get.query({ runId: started.run.runId })).toMatchObject({ status: "completed", segment: 2, input: "once more" });
  });

  it("resources: a run's timeline, in pages, without the streamed deltas", async () => {
    const { run } = await call(client, startRun, { strategy: "say", cwd: w.cwd, input: "for the timeline", wait: true, timeoutSeconds: 30 });
    const { resourceTemplates } = await client.listResourceTemplates();
    expect(resourceTemplates.map((r) => r.uriTemplate)).toEqual([
      "switchyard://runs/{runId}/timeline",
      "switchyard://runs/{runId}/timeline{?after}",
      "switchyard://agents/{agentId}/log",
      "switchyard://agents/{agentId}/log{?from}",
    ]);
    expect((await client.listResources()).resources.map((r) => r.uri)).toContain(`switchyard://runs/${run.runId}/timeline`);
    const read = await client.readResource({ uri: `switchyard://runs/${run.runId}/timeline` });
    const page = JSON.parse((read.contents[0] as { text: string }).text) as { events: Array<{ id: number; type: string }>; nextAfter: number };
    const { events } = await w.t.client.runs.timeline.query({ runId: run.runId });
    expect(page.events.map((e) => e.id)).toEqual(events.filter((e) => e.type !== "run.agent_streamed").map((e) => e.id));
    expect(page.events[0]!.type).toBe("run.started");
    expect(page.events.at(-1)!.type).toBe("run.completed");
    const rest = await client.readResource({ uri: `switchyard://runs/${run.runId}/timeline?after=${page.nextAfter}` });
    expect(JSON.parse((rest.contents[0] as { text: string }).text).events).toEqual([]);
    await expect(client.readResource({ uri: `switchyard://runs/${run.runId}/timeline?after=x` })).rejects.toThrow(/VALIDATION_ERROR/);
  });

  it("a run that asks a human: start_run's wait returns its request, the inbox lists it, answer_run_request answers it", async () => {
    const started = await call(client, startRun, { strategy: "human", cwd: w.cwd, input: "", wait: true, timeoutSeconds: 30 });
    expect(started).toMatchObject({ status: "running", needsHuman: true });
    const request = started.run.pendingRequests[0]!;
    expect(request).toMatchObject({ kind: "input", agentName: "human", prompt: "Your topic?" });

    const box = await call(client, inbox, {});
    expect(box.items).toContainEqual(expect.objectContaining({ kind: "run_request", id: request.requestId, runId: started.run.runId }));
    expect((await w.t.client.inbox.list.query()).items.map((i) => i.id)).toContain(request.requestId);

    const answered = await call(client, answerRunRequest, { runId: started.run.runId, requestId: request.requestId, text: "SAY[answered over MCP]" });
    expect(answered).toMatchObject({ runId: started.run.runId, requestId: request.requestId, kind: "input" });
    const done = await call(client, getRun, { runId: started.run.runId, wait: true, timeoutSeconds: 30 });
    expect(done).toMatchObject({ status: "completed", run: { result: "answered over MCP", pendingRequests: [] } });
    expect(await w.t.client.runs.get.query({ runId: started.run.runId })).toMatchObject({ status: "completed", result: "answered over MCP" });
    expect((await call(client, inbox, {})).items.some((i) => i.id === request.requestId)).toBe(false);
  });

  it('get_run\'s wait ends with status "pending" (and progress notifications) while the run works; stop_run cancels it', async () => {
    const started = await call(client, startRun, { strategy: "long", cwd: w.cwd, input: "talk" });
    expect(started).toMatchObject({ status: "running", needsHuman: false });
    expect(started.waitedMs).toBeUndefined();
    const runId = started.run.runId;

    const t0 = Date.now();
    let progress = 0;
    const waited = await call(client, getRun, { runId, wait: true, timeoutSeconds: 6 }, () => progress++);
    expect(Date.now() - t0).toBeGreaterThanOrEqual(5900);
    expect(waited).toMatchObject({ status: "pending", needsHuman: false, run: { status: "running" } });
    expect(waited.waitedMs).toBeGreaterThanOrEqual(5900);
    expect(progress).toBeGreaterThanOrEqual(1);

    const stopped = await call(client, stopRun, { runId });
    expect(stopped).toMatchObject({ status: "cancelled", run: { status: "cancelled", error: { code: "CANCELLED" } } });
    expect(await w.t.client.runs.get.query({ runId })).toMatchObject({ status: "cancelled" });
  });

  it("a long result comes in pages", async () => {
    const done = await call(client, startRun, { strategy: "big", cwd: w.cwd, wait: true, timeoutSeconds: 30 });
    const full = (await w.t.client.runs.get.query({ runId: done.run.runId })).result!;
    expect(full.length).toBeGreaterThan(16_000);
    expect(done.run).toMatchObject({ resultOffset: 0, resultChars: full.length, nextResultOffset: 8000 });
    let text = done.run.result!;
    for (let next = done.run.nextResultOffset; next !== null; ) {
      const more = await call(client, getRun, { runId: done.run.runId, resultOffset: next });
      expect(more.run.result!.length).toBeLessThanOrEqual(8000);
      text += more.run.result!;
      next = more.run.nextResultOffset;
    }
    expect(text).toBe(full);
  });

  it("daemons: list_daemons, trigger_daemon (the daemon gets the event), daemon_snapshot", async () => {
    const d = await w.t.client.daemons.spawn.mutate({ name: `mcp-${transport}`, task: "Acknowledge each trigger.", model: "mock/echo" });
    const listed = await call(client, listDaemons, {});
    expect(listed.daemons.find((x) => x.id === d.id)).toMatchObject({ name: `mcp-${transport}`, status: "running" });

    const triggered = await call(client, triggerDaemon, { daemon: `mcp-${transport}`, payload: { kind: "file_changed", path: `src/${transport}.rs` } });
    expect(triggered.seq).toBeGreaterThanOrEqual(0);
    const deadline = Date.now() + 15_000;
    let snap = await w.t.client.daemons.snapshot.query({ id: d.id });
    // until the daemon took the event and finished its turn (its answer is a message too)
    const quiet = (x: typeof snap) => JSON.stringify(x.visible_messages).includes(`src/${transport}.rs`) && x.pending_event_count === 0 && x.inflight_event === null;
    while (!quiet(snap) && Date.now() < deadline) {
      await new Promise((r) => setTimeout(r, 100));
      snap = await w.t.client.daemons.snapshot.query({ id: d.id });
    }
    expect(JSON.stringify(snap.visible_messages)).toContain(`src/${transport}.rs`);

    const seen = await call(client, daemonSnapshot, { daemon: d.id, lastMessages: 50 });
    expect(seen.daemon).toMatchObject({ id: d.id, status: "running" });
    expect(seen.totalMessages).toBe(snap.visible_messages.length);
    expect(seen.messages.some((m) => m.text.includes(`src/${transport}.rs`))).toBe(true);
    await w.t.client.daemons.stop.mutate({ id: d.id });
    expect(await callError(client, "trigger_daemon", { daemon: d.id, payload: 1 })).toMatch(/^DAEMON_NOT_RUNNING: /);
  });

  it("bad input is a tool error naming the field; domain errors keep their code; the server stays up", async () => {
    expect(await callError(client, "no_such_tool", {})).toMatch(/no_such_tool not found/);
    expect(await callError(client, "get_run", { runId: 5 })).toMatch(/runId/);
    expect(await callError(client, "start_run", {})).toMatch(/strategy/);
    expect(await callError(client, "start_run", { strategy: "say", timeoutSeconds: -1 })).toMatch(/timeoutSeconds/);
    expect(await callError(client, "answer_run_request", { runId: "r", requestId: "q", decision: "maybe" })).toMatch(/decision/);
    expect(await callError(client, "start_run", { strategy: "say", input: "x".repeat(1_000_000) })).toMatch(/100000 characters at input/);
    expect(await callError(client, "trigger_daemon", { daemon: "d", payload: Array.from({ length: 20_000 }, (_, i) => i) })).toMatch(/more than the maximum of 10000 elements/);
    expect(await callError(client, "get_run", { runId: "no-such-run" })).toMatch(/^RUN_NOT_FOUND: Run not found: no-such-run/);
    expect(await callError(client, "start_run", { strategy: "no-such-strategy", cwd: w.cwd })).toMatch(/^PREPARE_FAILED: /);
    if (transport === "http") {
      // past the route's body limit: the HTTP request is refused (413), the client throws
      await expect(client.callTool({ name: "start_run", arguments: { strategy: "say", input: "x".repeat(5 * 1024 * 1024) } })).rejects.toThrow(/413|too large/i);
    }
    expect(await w.t.client.health.query()).toMatchObject({ status: "ok" });
    expect((await call(client, listStrategies, { cwd: w.cwd })).strategies.length).toBeGreaterThan(0);
  });
});
