import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, afterEach, describe, expect, it } from "vitest";
import type { BusEvent } from "../../shared/events";
import { createSwitchyardClient } from "../client";
import { makeRepo } from "../testing/agents-world";
import { fakeAgentPrompt } from "../testing/fake-agent";
import { removeHome, spawnServer, tempHome, type ServerProcess } from "../testing/server-harness";

/**
 * A run in a CLI step when the server dies (kill -9) or restarts (SIGTERM): the agent runs on
 * detached; the restarted server resumes the run, re-attaches the step to the same agent (no
 * second spawn) and completes with its result. No run or agent is left "running".
 */
const home = tempHome();
const repo = makeRepo("switchyard-cli-recovery-");
let server: ServerProcess | undefined;
// each test ends with its restarted server stopped, or it would outlive the test run
afterEach(async () => {
  await server?.kill("SIGKILL");
  server = undefined;
});
afterAll(() => {
  removeHome(home);
  removeHome(repo);
});

const STRATEGY = `name: Slow coder\nversion: "1"\nagents:\n  coder: {type: cli, provider: fake}\n  after: {model: mock/echo}\nflow: {type: sequential, steps: [{agent: coder}, {agent: after}]}\n`;

async function runThroughRestart(signal: "SIGKILL" | "SIGTERM", tag: string) {
  mkdirSync(join(repo, "strategies"), { recursive: true });
  const strategyPath = join(repo, "strategies", "slow.yaml");
  writeFileSync(strategyPath, STRATEGY);
  server = await spawnServer({ home, env: { SWITCHYARD_LOG_LEVEL: "warn", SWITCHYARD_AGENT_CLEANUP: "off", SWITCHYARD_AGENT_AUTOCOMMIT: "off" } });
  let client = createSwitchyardClient({ url: server.url });
  const { runId } = await client.runs.prepare.mutate({ strategyPath, cwd: repo });
  await client.runs.start.mutate({ runId, input: fakeAgentPrompt("slow", [{ text: "working" }, { sleep: 2500 }, { done: `${tag} finished while the server was away` }]) });
  const runEvents = async () => (await client.events.list.query({ scope: { kind: "run", id: runId }, limit: 1000 })).events as BusEvent[];
  let cli: { agentId: string } | undefined;
  for (let i = 0; i < 200 && !cli; i++) {
    cli = (await runEvents()).find((e) => e.type === "run.cli_agent_started")?.payload as { agentId: string } | undefined;
    if (!cli) await new Promise((r) => setTimeout(r, 25));
  }
  expect(cli).toBeDefined();
  const pid = (await client.agents.get.query({ agentId: cli!.agentId })).pid!;
  await server.kill(signal);
  expect(() => process.kill(pid, 0)).not.toThrow(); // the agent runs on without us

  server = await spawnServer({ home, port: server.port, env: { SWITCHYARD_LOG_LEVEL: "warn", SWITCHYARD_AGENT_CLEANUP: "off", SWITCHYARD_AGENT_AUTOCOMMIT: "off" } });
  client = createSwitchyardClient({ url: server.url });
  let run = await client.runs.get.query({ runId });
  for (let i = 0; i < 400 && (run.status === "running" || run.status === "pending"); i++) {
    await new Promise((r) => setTimeout(r, 50));
    run = await client.runs.get.query({ runId });
  }
  expect(run.status, JSON.stringify(run.error)).toBe("completed");
  const events = await runEvents();
  const spawned = new Set(events.filter((e) => e.type === "run.cli_agent_started").map((e) => (e.payload as { agentId: string }).agentId));
  expect([...spawned]).toEqual([cli!.agentId]); // re-attached, never spawned twice
  const completed = events.filter((e) => e.type === "run.completed").at(-1)!.payload as { result?: string };
  expect(completed.result).toContain(`${tag} finished while the server was away`);
  expect(await client.agents.list.query({ status: ["starting", "running"] })).toEqual({ items: [], nextCursor: null });
}

describe("a CLI step across a server restart", () => {
  it("kill -9: the run resumes and re-attaches the step to its agent", async () => {
    await runThroughRestart("SIGKILL", "killed");
  });
  it("graceful restart (SIGTERM): the agent is not stopped; the step picks it up again", async () => {
    await runThroughRestart("SIGTERM", "restarted");
  });
});
