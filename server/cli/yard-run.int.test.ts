import { spawn } from "node:child_process";
import { writeFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { removeHome, startTestServer, tempHome, type TestServer } from "../testing/server-harness";

/** `yard run` against the real server: streams the run, prints a summary, exit code tells the outcome. */
const yard = resolve(import.meta.dirname, "..", "..", "bin", "yard.mjs");
let t: TestServer;
let cwd: string;

function runYard(args: string[]): Promise<{ code: number | null; out: string }> {
  return new Promise((res) => {
    const child = spawn(process.execPath, [yard, ...args], { env: { ...process.env, SWITCHYARD_URL: t.url }, stdio: ["ignore", "pipe", "pipe"] });
    let out = "";
    child.stdout.on("data", (d) => (out += d));
    child.stderr.on("data", (d) => (out += d));
    child.on("exit", (code) => res({ code, out }));
  });
}

beforeAll(async () => {
  t = await startTestServer();
  cwd = tempHome("switchyard-cli-cwd-");
  writeFileSync(join(cwd, "ok.yaml"), `name: Ok\nversion: "1.0"\nagents:\n  a: {model: mock/demo, systemPrompt: "SAY[hello from the cli run]"}\n  b: {model: mock/echo}\nflow: {type: sequential, steps: [{agent: a}, {agent: b}]}\n`);
  // a broadcast whose second agent finishes long before the first, then one more step
  writeFileSync(
    join(cwd, "fan.yaml"),
    `name: Fan\nversion: "1.0"\nagents:\n  slow: {model: mock/demo, systemPrompt: "DELAY[60] LONG[12]"}\n  quick: {model: mock/demo, systemPrompt: "SAY[the quick one]"}\n  after: {model: mock/demo, systemPrompt: "SAY[after the broadcast]"}\nflow:\n  type: sequential\n  steps:\n    - type: broadcast\n      steps: [{agent: slow}, {agent: quick}]\n    - agent: after\n`,
  );
  writeFileSync(join(cwd, "bad.yaml"), `name: Bad\nversion: "1.0"\nagents:\n  a: {model: nowhere/model}\nflow: {type: sequential, steps: [{agent: a}]}\n`);
});

afterAll(async () => {
  await t.stop();
  removeHome(t.home);
  removeHome(cwd);
});

describe("yard run", () => {
  it("streams the agents' text and exits 0 when the run completes", async () => {
    const { code, out } = await runYard(["run", "ok.yaml", "--cwd", cwd, "--input", "go"]);
    expect(out).toContain("── a (mock/demo)");
    expect(out).toContain("hello from the cli run");
    expect(out).toMatch(/✔ completed/);
    expect(code).toBe(0);
    const { out: listed, code: listCode } = await runYard(["runs", "--cwd", cwd]);
    expect(listCode).toBe(0);
    expect(listed).toMatch(/completed\s+\d+s ago\s+Ok/);
  });

  it("a broadcast whose second agent finishes first: yard run and yard continue print every agent and the steps after it", async () => {
    const expectAll = (out: string) => {
      expect(out).toContain("── slow (mock/demo)");
      expect(out).toContain("t11");
      expect(out).toContain("── quick (mock/demo)");
      expect(out).toContain("the quick one");
      expect(out).toContain("── after (mock/demo)");
      expect(out).toContain("after the broadcast");
      // the slow one is shown live, the quick one printed whole when it ends, then the next step
      expect(out.indexOf("t11")).toBeLessThan(out.indexOf("the quick one"));
      expect(out.indexOf("the quick one")).toBeLessThan(out.indexOf("after the broadcast"));
      expect(out).toMatch(/✔ completed/);
    };
    const first = await runYard(["run", "fan.yaml", "--cwd", cwd, "--input", "go"]);
    expect(first.code, first.out).toBe(0);
    expectAll(first.out);
    const runId = /\(run (\S+?)\)/.exec(first.out)?.[1];
    expect(runId, first.out).toBeTruthy();
    const again = await runYard(["continue", runId!, "--input", "again"]);
    expect(again.code, again.out).toBe(0);
    expect(again.out).toContain("segment 2");
    expectAll(again.out);
  });

  it("exits non-zero with the error when the run fails", async () => {
    const { code, out } = await runYard(["run", "bad.yaml", "--cwd", cwd]);
    expect(out).toMatch(/EXECUTION_ERROR|MODEL_UNAVAILABLE|nowhere/);
    expect(code).not.toBe(0);
  });

  it("exits non-zero with a clear message for a missing strategy", async () => {
    const { code, out } = await runYard(["run", "missing.yaml", "--cwd", cwd]);
    expect(out).toMatch(/not found/i);
    expect(code).toBe(1);
  });
});

describe("yard daemon", () => {
  it("spawns, triggers, snapshots, stops and lists a daemon", async () => {
    const spawned = await runYard(["daemon", "spawn", "--task", "Echo triggers.", "--name", "cli-daemon", "--model", "mock/echo", "--json"]);
    expect(spawned.code, spawned.out).toBe(0);
    const { id } = JSON.parse(spawned.out) as { id: string };
    expect(id).toMatch(/^daemon_/);
    const trig = await runYard(["daemon", "trigger", id, '{"n":1}', "--json"]);
    expect(trig.code).toBe(0);
    expect(JSON.parse(trig.out)).toHaveProperty("seq");
    const snap = await runYard(["daemon", "snapshot", id, "--json"]);
    expect(snap.code).toBe(0);
    expect(JSON.parse(snap.out)).toHaveProperty("event_queue_capacity");
    expect((await runYard(["daemon", "stop", id])).code).toBe(0);
    const list = await runYard(["daemon", "list", "--json"]);
    expect((JSON.parse(list.out) as Array<{ id: string; status: string }>).find((d) => d.id === id)?.status).toBe("stopped");
    const bad = await runYard(["daemon", "trigger", id, "x"]);
    expect(bad.code).toBe(1);
    expect(bad.out).toMatch(/not running/i);
  });
});
