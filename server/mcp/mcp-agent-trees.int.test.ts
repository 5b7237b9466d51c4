import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { AgentInfo } from "../../shared/agents";
import { agentSecrets, agentToken } from "../agents/agent-env";
import { startAgentsWorld, waitForAgent, type AgentsWorld } from "../testing/agents-world";
import { fakeAgentPrompt } from "../testing/fake-agent";
import { call, callError, connectHttp } from "../testing/mcp-client";
import { getAgent, listAgents, spawnAgent } from "./tools/agents";
import { daemonSnapshot, listDaemons, triggerDaemon } from "./tools/daemons";

/**
 * The agent tree's limits as an agent meets them: `spawn_agent` called on the agent's own endpoint
 * (`/mcp/agents/<id>`, with its own token, as every CLI agent is configured) past the depth limit
 * or past the 6th child is a tool error naming the limit's code and the variable that sets it;
 * a child acting on a sibling it did not spawn (or on its parent) is a tool error too; the daemon
 * tools answer only an agent spawned with the `daemons` grant.
 */

const TOKEN = "mcp-agent-trees-test-token-0123456789";
let w: AgentsWorld;
const clients: Client[] = [];

beforeAll(async () => {
  w = await startAgentsWorld({ env: { SWITCHYARD_TOKEN: TOKEN } });
});
afterAll(async () => {
  for (const c of clients) await c.close().catch(() => undefined);
  // every agent done before its home goes
  for (const agent of (await w?.t.client.agents.list.query())?.items ?? []) await waitForAgent(w.t.client, agent.id).catch(() => undefined);
  await w?.stop();
});

const quick = (name: string) => fakeAgentPrompt(name, [{ done: `${name} done` }]);

/** The MCP server speaking for `agent`, reached with the agent's own token. */
async function speakingFor(agent: Pick<AgentInfo, "id">): Promise<Client> {
  const token = agentToken(agentSecrets(w.t.home, w.t.server.services.config.secretKey).mint, agent.id);
  const client = await connectHttp(w.t.url, { path: `/mcp/agents/${agent.id}`, token });
  clients.push(client);
  return client;
}

async function childrenOf(agentId: string): Promise<string[]> {
  return (await w.t.client.agents.list.query({})).items.filter((a) => a.parentAgentId === agentId).map((a) => a.id);
}

describe("agent trees over an agent's own MCP endpoint", () => {
  it("a spawn at depth 3 is a tool error naming AGENT_TREE_TOO_DEEP and SWITCHYARD_AGENT_MAX_DEPTH", async () => {
    const root = await w.t.client.agents.spawn.mutate({ provider: "fake", repo: w.repo, prompt: quick("root") });
    const one = (await call(await speakingFor(root), spawnAgent, { provider: "fake", prompt: quick("one") })).agent;
    const two = (await call(await speakingFor(one), spawnAgent, { provider: "fake", prompt: quick("two") })).agent;
    expect(await w.t.client.agents.get.query({ agentId: two.id })).toMatchObject({ parentAgentId: one.id, repoPath: root.repoPath });

    const refused = await callError(await speakingFor(two), "spawn_agent", { provider: "fake", prompt: quick("three") });
    expect(refused).toMatch(/^AGENT_TREE_TOO_DEEP: /);
    expect(refused).toContain("depth 3");
    expect(refused).toContain("SWITCHYARD_AGENT_MAX_DEPTH");
    expect(await childrenOf(two.id)).toEqual([]);
  });

  it("a 6th child is a tool error naming AGENT_TOO_MANY_CHILDREN and SWITCHYARD_AGENT_MAX_CHILDREN", async () => {
    const parent = await w.t.client.agents.spawn.mutate({ provider: "fake", repo: w.repo, prompt: quick("parent") });
    const mcp = await speakingFor(parent);
    for (let i = 1; i <= 5; i++) await call(mcp, spawnAgent, { provider: "fake", prompt: quick(`kid${i}`) });
    expect(await childrenOf(parent.id)).toHaveLength(5);

    const refused = await callError(mcp, "spawn_agent", { provider: "fake", prompt: quick("kid6") });
    expect(refused).toMatch(/^AGENT_TOO_MANY_CHILDREN: /);
    expect(refused).toContain("at most 5");
    expect(refused).toContain("SWITCHYARD_AGENT_MAX_CHILDREN");
    expect(await childrenOf(parent.id)).toHaveLength(5);
  });

  it("a child acting on a sibling it did not spawn, or on its parent, gets AGENT_FORBIDDEN; the sibling is untouched", async () => {
    const long = (name: string) => fakeAgentPrompt(name, [{ text: `${name} working` }, { sleep: 60_000 }, { done: `${name} done` }]);
    const parent = await w.t.client.agents.spawn.mutate({ provider: "fake", repo: w.repo, prompt: quick("boss") });
    const boss = await speakingFor(parent);
    const child = (await call(boss, spawnAgent, { provider: "fake", prompt: long("child") })).agent;
    const sibling = (await call(boss, spawnAgent, { provider: "fake", prompt: long("sibling") })).agent;
    const mcp = await speakingFor(child);

    for (const [tool, args] of [
      ["get_agent", { agentId: sibling.id }],
      ["stop_agent", { agentId: sibling.alias }],
      ["message_agent", { agentId: sibling.id, text: "stop what you are doing" }],
      ["answer_agent", { agentId: sibling.id, answers: { q1: "no" } }],
      ["agent_output", { agentId: sibling.id }],
      ["wait_for_agent", { agentId: sibling.id, timeoutSeconds: 1 }],
      ["agent_diff", { agentId: sibling.id }],
      ["merge_agent", { agentId: sibling.id }],
      ["stop_agent", { agentId: parent.id }],
    ] as const) {
      expect(await callError(mcp, tool, args), `${tool} ${JSON.stringify(args)}`).toMatch(/^AGENT_FORBIDDEN: /);
    }
    // it sees itself only; the sibling still works, and its parent can act on it
    expect((await call(mcp, listAgents, {})).agents.map((a) => a.id)).toEqual([child.id]);
    expect((await call(mcp, getAgent, { agentId: child.alias })).agent.parentAgentId).toBe(parent.id);
    expect((await w.t.client.agents.get.query({ agentId: sibling.id })).status).toBe("running");
    expect((await call(boss, getAgent, { agentId: sibling.alias })).agent.id).toBe(sibling.id);
    await w.t.client.agents.stop.mutate({ agentId: parent.id, cascade: true });
  });

  it("the daemon tools are AGENT_FORBIDDEN without the daemons grant and work with it; spawn_agent passes the grant on only from a parent that has it", async () => {
    const d = await w.t.client.daemons.spawn.mutate({ name: "mcp-grants", task: "Acknowledge each trigger.", model: "mock/echo" });
    const plain = await w.t.client.agents.spawn.mutate({ provider: "fake", repo: w.repo, prompt: quick("plain") });
    const granted = await w.t.client.agents.spawn.mutate({ provider: "fake", repo: w.repo, prompt: quick("granted"), grants: ["daemons"] });
    const without = await speakingFor(plain);
    for (const [tool, args] of [
      ["list_daemons", {}],
      ["trigger_daemon", { daemon: d.id, payload: { n: 1 } }],
      ["daemon_snapshot", { daemon: d.id }],
    ] as const) {
      expect(await callError(without, tool, args), tool).toMatch(/^AGENT_FORBIDDEN: .*needs the "daemons" grant/);
    }
    expect(await callError(without, "spawn_agent", { provider: "fake", prompt: quick("sneaky"), grants: ["daemons"] })).toMatch(/^AGENT_FORBIDDEN: .*only what it was granted/);

    const mcp = await speakingFor(granted);
    expect((await call(mcp, listDaemons, {})).daemons.map((x) => x.id)).toContain(d.id);
    expect((await call(mcp, triggerDaemon, { daemon: "mcp-grants", payload: { from: "an agent" } })).seq).toBeGreaterThanOrEqual(0);
    expect((await call(mcp, daemonSnapshot, { daemon: d.id })).daemon.id).toBe(d.id);
    const child = (await call(mcp, spawnAgent, { provider: "fake", prompt: quick("helper"), grants: ["daemons"] })).agent;
    expect(child).toMatchObject({ parentAgentId: granted.id, grants: ["daemons"] });
    expect((await call(await speakingFor(child), listDaemons, {})).total).toBeGreaterThanOrEqual(1);
    await w.t.client.daemons.stop.mutate({ id: d.id });
  });
});
