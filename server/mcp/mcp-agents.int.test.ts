import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { git, startAgentsWorld, waitForAgent, type AgentsWorld } from "../testing/agents-world";
import { fakeAgentPrompt, type FakeAgentScript } from "../testing/fake-agent";
import { call, callError, connectHttp, connectStdio, textOf } from "../testing/mcp-client";
import { agentDiff, agentOutput, mergeAgent } from "./tools/agent-work";
import { answerAgent, getAgent, listAgents, messageAgent, spawnAgent, stopAgent, waitForAgent as waitTool } from "./tools/agents";
import { answerQuestion, ask, pendingQuestions } from "./tools/conversations";
import { inbox } from "./tools/inbox";

/**
 * The agent and conversation tools with the fake agent CLI, over `/mcp` and over stdio (a server
 * with a token: both clients authenticate), each effect checked through tRPC; then
 * `/mcp/agents/:id`: the same server speaking for that agent, with its `approve` tool (claude's
 * permission prompt), and an agent token refused on another agent's path.
 */

const TOKEN = "mcp-agents-test-token-0123456789";
let w: AgentsWorld;

beforeAll(async () => {
  w = await startAgentsWorld({ env: { SWITCHYARD_TOKEN: TOKEN } });
});
afterAll(() => w?.stop());

const prompt = (task: string, script: FakeAgentScript) => fakeAgentPrompt(task, script);
const commitFile = (path: string, content: string) =>
  prompt(`write ${path}`, [{ text: `writing ${path}` }, { write: { path, content } }, { bash: `git add -A && git -c user.name=a -c user.email=a@b commit -qm "add ${path}"` }, { done: `wrote ${path}` }]);

describe.each(["http", "stdio"] as const)("agent and conversation tools over %s", (transport) => {
  let client: Client;
  beforeAll(async () => {
    client = transport === "http" ? await connectHttp(w.t.url, { token: TOKEN }) : (await connectStdio(w.t.url, { token: TOKEN })).client;
  });
  afterAll(() => client?.close());

  it("spawn_agent, wait_for_agent, get_agent, list_agents, agent_output, agent_diff, merge_agent", async () => {
    const body = Array.from({ length: 400 }, (_, i) => `line ${i} of the feature`).join("\n") + "\n";
    const spawned = await call(client, spawnAgent, { provider: "fake", repo: w.repo, prompt: commitFile(`${transport}.txt`, body), taskId: `task-${transport}` });
    expect(spawned.agent).toMatchObject({ provider: "fake", taskId: `task-${transport}`, branch: `switchyard/${spawned.agent.alias}` });
    expect((await w.t.client.agents.get.query({ agentId: spawned.agent.id })).alias).toBe(spawned.agent.alias);

    const waited = await call(client, waitTool, { agentId: spawned.agent.alias, timeoutSeconds: 30 });
    expect(waited).toMatchObject({ status: "idle", agent: { status: "idle", result: `wrote ${transport}.txt`, needsYou: false } });
    expect(await w.t.client.agents.get.query({ agentId: spawned.agent.id })).toMatchObject({ status: "idle", result: `wrote ${transport}.txt` });
    expect((await call(client, getAgent, { agentId: spawned.agent.alias })).agent).toMatchObject({ id: spawned.agent.id, status: "idle" });
    // a timeout past 50 s (clients often pass 60+) is taken and capped at 50, not refused
    expect(await call(client, waitTool, { agentId: spawned.agent.id, timeoutSeconds: 120 })).toMatchObject({ status: "idle" });

    const listed = await call(client, listAgents, { taskId: `task-${transport}` });
    expect(listed).toMatchObject({ total: 1, nextCursor: null, agents: [{ id: spawned.agent.id, status: "idle" }] });
    const paged = await call(client, listAgents, { limit: 1 });
    expect(paged.agents).toHaveLength(1);
    expect(paged.nextCursor === null).toBe(paged.total === 1);
    if (paged.nextCursor) expect((await call(client, listAgents, { limit: 1, cursor: paged.nextCursor })).agents[0]?.id).not.toBe(paged.agents[0]!.id);

    // the output: the tail, a range, a kind filter
    const tail = await call(client, agentOutput, { agentId: spawned.agent.id });
    const { totalLines } = await w.t.client.agents.output.query({ agentId: spawned.agent.id, limit: 1 });
    expect(tail.totalLines).toBe(totalLines);
    const events = tail.lines.flatMap((l) => l.events);
    expect(events).toContainEqual(expect.objectContaining({ kind: "text", text: `writing ${transport}.txt` }));
    expect(events).toContainEqual(expect.objectContaining({ kind: "tool_call", name: "Write" }));
    const first = await call(client, agentOutput, { agentId: spawned.agent.id, fromLine: 0, limit: 2 });
    expect(first).toMatchObject({ fromLine: 0, toLine: 2, nextFromLine: 2, prevFromLine: null });
    const calls = await call(client, agentOutput, { agentId: spawned.agent.id, fromLine: 0, limit: 200, kinds: ["tool_call"] });
    expect(calls.lines.flatMap((l) => l.events.map((e) => e.kind))).toEqual(["tool_call", "tool_call"]);

    // the log as a resource
    const log = await client.readResource({ uri: `switchyard://agents/${spawned.agent.alias}/log` });
    const text = (log.contents[0] as { text: string }).text;
    expect(text).toMatch(new RegExp(`^# agent ${spawned.agent.id}: lines 0-${totalLines} of ${totalLines}`));
    expect(text).toContain(`text: writing ${transport}.txt`);
    expect(text).toContain("tool_call Write");
    const fromTwo = await client.readResource({ uri: `switchyard://agents/${spawned.agent.id}/log?from=2` });
    expect((fromTwo.contents[0] as { text: string }).text).toMatch(new RegExp(`^# agent ${spawned.agent.id}: lines 2-${totalLines} of ${totalLines}`));
    await expect(client.readResource({ uri: "switchyard://agents/no-such-agent/log" })).rejects.toThrow(/AGENT_NOT_FOUND/);

    // the diff in pages
    const diff = await call(client, agentDiff, { agentId: spawned.agent.id, maxChars: 1000 });
    expect(diff).toMatchObject({ dirty: false, commitsAhead: 1, offset: 0, nextOffset: 1000, files: [{ path: `${transport}.txt`, insertions: 400 }] });
    let patch = diff.patch;
    for (let next = diff.nextOffset; next !== null; ) {
      const more = await call(client, agentDiff, { agentId: spawned.agent.id, offset: next, maxChars: 100_000 });
      patch += more.patch;
      next = more.nextOffset;
    }
    expect(patch).toBe((await w.t.client.agents.diff.query({ agentId: spawned.agent.id })).patch);

    const merged = await call(client, mergeAgent, { agentId: spawned.agent.id, strategy: "squash" });
    expect(merged).toMatchObject({ merged: true, into: "main", strategy: "squash", commits: 1 });
    expect(readFileSync(join(w.repo, `${transport}.txt`), "utf8")).toBe(body);
    expect(git(w.repo, "rev-parse", "HEAD")).toBe(merged.commit);
    expect((await w.t.client.agents.get.query({ agentId: spawned.agent.id })).merge).toMatchObject({ into: "main", strategy: "squash", commit: merged.commit });
    expect(await call(client, mergeAgent, { agentId: spawned.agent.id })).toMatchObject({ merged: false });
  });

  it("answer_agent answers its questions; message_agent resumes it; both on the same session", async () => {
    const script = { steps: [{ questions: [{ id: "q1", question: "Which colour?" }] }], resume: [[{ done: "painted it" }], [{ done: "followed up" }]] } as FakeAgentScript;
    const { agent } = await call(client, spawnAgent, { provider: "fake", repo: w.repo, prompt: prompt("paint", script) });
    const asking = await call(client, waitTool, { agentId: agent.id, timeoutSeconds: 30 });
    expect(asking).toMatchObject({ status: "waiting_for_input", agent: { needsYou: true, pendingQuestions: [{ id: "q1", question: "Which colour?" }] } });
    expect((await call(client, inbox, {})).items).toContainEqual(expect.objectContaining({ kind: "agent_question", agentId: agent.id }));

    expect(await callError(client, "answer_agent", { agentId: agent.id, answers: {} })).toMatch(/at least one answer/);
    await call(client, answerAgent, { agentId: agent.id, answers: { q1: "blue" } });
    expect(await call(client, waitTool, { agentId: agent.id, timeoutSeconds: 30 })).toMatchObject({ status: "idle", agent: { result: "painted it", sessionNumber: 2 } });
    const log = await w.t.client.agents.output.query({ agentId: agent.id, limit: 200 });
    expect(JSON.stringify(log.lines)).toContain("blue");

    const sent = await call(client, messageAgent, { agentId: agent.id, text: "one more thing" });
    expect(sent.delivered).toBe("now");
    expect(await call(client, waitTool, { agentId: agent.id, timeoutSeconds: 30 })).toMatchObject({ status: "idle", agent: { result: "followed up", sessionNumber: 3 } });
    expect(await w.t.client.agents.get.query({ agentId: agent.id })).toMatchObject({ status: "idle", sessionNumber: 3, result: "followed up" });
  });

  it('wait_for_agent answers "pending" while it works and returns when it needs an approval; stop_agent stops it', async () => {
    const { agent } = await call(client, spawnAgent, { provider: "fake", repo: w.repo, prompt: prompt("hang", [{ text: "working" }, { hang: true }]) });
    const t0 = Date.now();
    const waited = await call(client, waitTool, { agentId: agent.id, timeoutSeconds: 1 });
    expect(Date.now() - t0).toBeGreaterThanOrEqual(950);
    expect(waited).toMatchObject({ status: "pending", agent: { status: "running" } });
    const stopped = await call(client, stopAgent, { agentId: agent.id });
    expect(stopped.agent.status).toBe("stopped");
    expect((await w.t.client.agents.get.query({ agentId: agent.id })).status).toBe("stopped");

    const asker = await call(client, spawnAgent, {
      provider: "fake",
      repo: w.repo,
      permissionMode: "ask",
      prompt: prompt("approve", [{ permission: { tool: "Bash", input: { command: "touch ok.txt" } } }, { done: "ran it" }]),
    });
    const blocked = await call(client, waitTool, { agentId: asker.agent.id, timeoutSeconds: 30 });
    expect(blocked).toMatchObject({ status: "running", agent: { needsYou: true, pendingApprovals: 1 } });
    const [approval] = await w.t.client.agents.approvals.query({ agentId: asker.agent.id, status: "pending" });
    expect((await call(client, inbox, {})).items).toContainEqual(expect.objectContaining({ kind: "agent_approval", id: approval!.id }));
    await w.t.client.agents.decide.mutate({ approvalId: approval!.id, allow: true });
    expect(await call(client, waitTool, { agentId: asker.agent.id, timeoutSeconds: 30 })).toMatchObject({ status: "idle", agent: { result: "ran it" } });
  });

  it("ask waits for the answer (pending, then answered); pending_questions and answer_question", async () => {
    const { agent: target } = await call(client, spawnAgent, { provider: "fake", repo: w.repo, prompt: prompt("listen", [{ hang: true }]), phaseId: `phase-${transport}` });
    const { agent: asker } = await call(client, spawnAgent, { provider: "fake", repo: w.repo, prompt: prompt("ask", [{ hang: true }]) });

    const first = await call(client, ask, { fromAgentId: asker.id, phaseId: `phase-${transport}`, question: "Which port?", timeoutSeconds: 1 });
    expect(first).toMatchObject({ status: "pending", toAgentId: target.id, answer: null });
    const listed = await call(client, pendingQuestions, { agentId: target.alias });
    expect(listed.questions).toEqual([expect.objectContaining({ conversationId: first.conversationId, fromAgentId: asker.id, question: "Which port?" })]);

    const waiting = call(client, ask, { conversationId: first.conversationId, timeoutSeconds: 30 });
    await new Promise((r) => setTimeout(r, 300));
    const answered = await call(client, answerQuestion, { conversationId: first.conversationId, answer: "7422" });
    expect(answered).toMatchObject({ status: "answered", fromAgentId: asker.id });
    expect(await waiting).toMatchObject({ status: "answered", answer: "7422" });
    expect(await w.t.client.conversations.get.query({ conversationId: first.conversationId })).toMatchObject({ status: "answered", answer: "7422" });

    // to the human, without waiting; the human's pending questions and inbox show it
    const toHuman = await call(client, ask, { fromAgentId: asker.id, toAgentId: "human", question: "May I deploy?", wait: false });
    expect(toHuman.status).toBe("pending");
    expect((await call(client, pendingQuestions, {})).questions.map((q) => q.conversationId)).toContain(toHuman.conversationId);
    expect((await call(client, inbox, {})).items).toContainEqual(expect.objectContaining({ kind: "conversation", id: toHuman.conversationId }));
    await call(client, answerQuestion, { conversationId: toHuman.conversationId, answer: "yes" });
    expect(await callError(client, "answer_question", { conversationId: toHuman.conversationId, answer: "again" })).toMatch(/^CONVERSATION_ANSWERED: /);
    expect(await callError(client, "ask", { question: "two targets", toAgentId: "human", taskId: "t" })).toMatch(/exactly one/);
    expect(await callError(client, "get_agent", { agentId: "no-such-agent" })).toMatch(/^AGENT_NOT_FOUND: /);

    await w.t.client.agents.stop.mutate({ agentId: target.id });
    await w.t.client.agents.stop.mutate({ agentId: asker.id });
  });
});

describe("/mcp/agents/:id: the server speaking for one agent, with its approve tool", () => {
  it("offers approve besides every tool; approve waits for a human's decision; ask and pending_questions default to the agent", async () => {
    const a = await w.t.client.agents.spawn.mutate({ provider: "fake", repo: w.repo, prompt: prompt("token", [{ bash: 'printf %s "$SWITCHYARD_TOKEN" > .switchyard/token' }, { hang: true }]) });
    const b = await w.t.client.agents.spawn.mutate({ provider: "fake", repo: w.repo, prompt: prompt("other", [{ hang: true }]) });
    const tokenFile = join(a.workspacePath, ".switchyard", "token");
    for (let i = 0; i < 100 && !existsQuiet(tokenFile); i++) await new Promise((r) => setTimeout(r, 100));
    const agentToken = readFileSync(tokenFile, "utf8");
    expect(agentToken.length).toBeGreaterThan(10);

    // its own token on its own path (by alias too)
    const client = await connectHttp(w.t.url, { path: `/mcp/agents/${a.alias}`, token: agentToken });
    const { tools } = await client.listTools();
    expect(tools.map((t) => t.name)).toContain("approve");
    expect(tools).toHaveLength(24);

    const decision = client.callTool({ name: "approve", arguments: { tool_name: "Bash", input: { command: "ls" }, tool_use_id: "toolu_1" } }) as Promise<CallToolResult>;
    let pending: Awaited<ReturnType<typeof w.t.client.agents.approvals.query>> = [];
    for (let i = 0; i < 100 && pending.length === 0; i++) {
      await new Promise((r) => setTimeout(r, 50));
      pending = await w.t.client.agents.approvals.query({ agentId: a.id, status: "pending" });
    }
    expect(pending).toEqual([expect.objectContaining({ toolName: "Bash", input: { command: "ls" } })]);
    await w.t.client.agents.decide.mutate({ approvalId: pending[0]!.id, allow: true, updatedInput: { command: "ls -a" } });
    expect(JSON.parse(textOf(await decision))).toEqual({ behavior: "allow", updatedInput: { command: "ls -a" } });

    const asked = await call(client, ask, { toAgentId: b.id, question: "ready?", wait: false });
    expect(await w.t.client.conversations.get.query({ conversationId: asked.conversationId })).toMatchObject({ fromAgentId: a.id, toAgentId: b.id });
    await w.t.client.conversations.ask.mutate({ fromAgentId: b.id, toAgentId: a.id, question: "and you?" });
    expect(await call(client, pendingQuestions, {})).toMatchObject({ agentId: a.id, total: 1, questions: [{ fromAgentId: b.id, question: "and you?" }] });
    await client.close();

    // an agent's token on another agent's path: 403; an unknown agent: 404
    const other = await fetch(`${w.t.url}/mcp/agents/${b.id}`, { method: "POST", headers: rpcHeaders(agentToken), body: INITIALIZE });
    expect(other.status).toBe(403);
    const unknown = await fetch(`${w.t.url}/mcp/agents/no-such-agent`, { method: "POST", headers: rpcHeaders(TOKEN), body: INITIALIZE });
    expect(unknown.status).toBe(404);
    expect((await fetch(`${w.t.url}/mcp/agents/${a.id}`, { headers: { authorization: `Bearer ${TOKEN}` } })).status).toBe(405);

    await waitForAgent(w.t.client, a.id, ["running"]);
    await w.t.client.agents.stop.mutate({ agentId: a.id });
    await w.t.client.agents.stop.mutate({ agentId: b.id });
  });
});

const INITIALIZE = JSON.stringify({ jsonrpc: "2.0", id: 1, method: "initialize", params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "t", version: "1" } } });
const rpcHeaders = (token: string) => ({ "content-type": "application/json", accept: "application/json, text/event-stream", authorization: `Bearer ${token}` });

function existsQuiet(path: string): boolean {
  try {
    return readFileSync(path, "utf8").length > 0;
  } catch {
    return false;
  }
}
