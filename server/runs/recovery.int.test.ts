import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createSwitchyardClient } from "../client";
import { CommaClient, type Frame } from "../testing/comma-client";
import { startFakeModelServer, type FakeModelServer } from "../testing/fake-model";
import { removeHome, spawnServer, tempHome, type ServerProcess } from "../testing/server-harness";

/**
 * kill -9 of the server mid-stream and while a run waits for a human. After the restart the
 * first run is closed with INTERRUPTED and can be continued; the second still waits, answering
 * it finishes the flow, and completed steps are not run again.
 */
let fake: FakeModelServer;
let home: string;
let cwd: string;
let server: ServerProcess | undefined;

beforeAll(async () => {
  fake = await startFakeModelServer();
  home = tempHome();
  cwd = tempHome("switchyard-cwd-");
  mkdirSync(join(cwd, "strategies"));
});

afterAll(async () => {
  await server?.kill("SIGKILL");
  await fake.close();
  removeHome(home);
  removeHome(cwd);
});

const env = () => ({ ANTHROPIC_BASE_URL: fake.url, ANTHROPIC_API_KEY: "k", SWITCHYARD_LOG_LEVEL: "warn" });
const ended = (runId: string) => (f: Frame) => f.runId === runId && (f.type === "strategy_completed" || f.type === "strategy_error");

describe("restart recovery", () => {
  it("closes a run killed mid-stream as INTERRUPTED, keeps a waiting run waiting, and both go on", async () => {
    writeFileSync(join(cwd, "strategies", "long.yaml"), `name: Long\nversion: "1.0"\nagents:\n  talker: {model: anthropic/m, systemPrompt: "LONG[100000] DELAY[5]"}\nflow: {type: sequential, steps: [{agent: talker}]}\n`);
    writeFileSync(
      join(cwd, "strategies", "wait.yaml"),
      `name: Wait\nversion: "1.0"\nagents:\n  writer: {model: anthropic/m, systemPrompt: "WRITER SAY[]"}\n  human: {type: user, config: {presetMessage: "Approve?"}}\n  finisher: {model: anthropic/m, systemPrompt: "FINISHER SAY[all done]"}\nflow: {type: sequential, steps: [{agent: writer}, {agent: human}, {agent: finisher}]}\n`,
    );
    server = await spawnServer({ home, env: env() });
    const port = server.port;
    let c = await CommaClient.connect(server.url);

    const waiting = await c.request({ type: "prepare_run", strategyPath: "strategies/wait.yaml", cwd });
    const waitId = waiting.runId as string;
    // the writer answers nothing, so the user agent after it asks (it asks only when it gets nothing)
    c.send({ type: "start_run", runId: waitId, input: "go" });
    const ask = await c.waitFor((f) => f.runId === waitId && f.type === "request_input");
    expect(ask.agentName).toBe("human");

    const streaming = await c.request({ type: "prepare_run", strategyPath: "strategies/long.yaml", cwd });
    const longId = streaming.runId as string;
    c.send({ type: "start_run", runId: longId, input: "talk" });
    await c.waitFor((f) => f.runId === longId && f.type === "agent_streaming" && (f.event as { type: string }).type === "text");

    await server.kill("SIGKILL");
    c.close();
    const writerCalls = fake.requests.filter((r) => r.script.system.includes("WRITER")).length;
    expect(writerCalls).toBe(1);

    server = await spawnServer({ home, port, env: env() });
    const client = createSwitchyardClient({ url: server.url });

    // the stream that was cut: INTERRUPTED, never "running"
    const interrupted = await client.runs.get.query({ runId: longId });
    expect(interrupted.status).toBe("error");
    expect(interrupted.error?.code).toBe("INTERRUPTED");
    const listed = (await client.runs.list.query({ cwd })).items;
    expect(listed.filter((r) => r.status === "running").map((r) => r.runId)).toEqual([waitId]);

    // the waiting one: same request, still answerable
    const still = await client.runs.get.query({ runId: waitId });
    expect(still.status).toBe("running");
    expect(still.pendingRequests).toHaveLength(1);
    expect(still.pendingRequests[0]).toMatchObject({ kind: "input", agentName: "human", prompt: "Approve?" });

    c = await CommaClient.connect(server.url);
    c.send({ type: "subscribe", runId: waitId });
    await new Promise((r) => setTimeout(r, 100));
    c.send({ type: "user_input", runId: waitId, agentName: "human", text: "approved" });
    const done = await c.waitFor(ended(waitId));
    expect(done).toMatchObject({ type: "strategy_completed", result: "all done" });
    expect(fake.requests.filter((r) => r.script.system.includes("WRITER")).length).toBe(1); // not run again
    const finisher = fake.requests.find((r) => r.script.system.includes("FINISHER"));
    expect(finisher?.script.lastUserText).toContain("approved");

    // the interrupted run is continuable
    const again = await c.request({ type: "prepare_run", runId: longId });
    expect(again.type).toBe("run_prepared");
    fake.enqueue("short answer now");
    c.send({ type: "continue_run", runId: longId, input: "again", requestId: "cont-long" });
    expect(await c.waitFor((f) => ended(longId)(f) && f.requestId === "cont-long")).toMatchObject({ type: "strategy_completed", result: "short answer now" });
    c.close();
  });
});
