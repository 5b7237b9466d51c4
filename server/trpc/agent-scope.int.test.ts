import { TRPCClientError } from "@trpc/client";
import WebSocket from "ws";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { agentSecrets, agentToken } from "../agents/agent-env";
import { createSwitchyardClient, type SwitchyardClient } from "../client";
import { startAgentsWorld, waitForAgent, type AgentsWorld } from "../testing/agents-world";
import { fakeAgentPrompt } from "../testing/fake-agent";
import { AGENT_RULES } from "./agent-scope";
import { appRouter } from "./router";

/**
 * Scoped agent tokens: an agent's token (its SWITCHYARD_TOKEN) acts only on the agent and the
 * agents it spawned, on a server with no token of its own too (a human there is open, an agent is not).
 */
let w: AgentsWorld;
let human: SwitchyardClient;

beforeAll(async () => {
  w = await startAgentsWorld();
  human = w.t.client;
});
afterAll(async () => {
  // every agent done before its home goes
  for (const agent of (await human?.agents.list.query())?.items ?? []) await waitForAgent(human, agent.id).catch(() => undefined);
  await w?.stop();
});

const quick = (name: string) => fakeAgentPrompt(name, [{ done: `${name} done` }]);
const as = (agentId: string) => createSwitchyardClient({ url: w.t.url, token: agentToken(agentSecrets(w.t.home, w.t.server.services.config.secretKey).mint, agentId) });

async function refusal(p: Promise<unknown>): Promise<{ code?: string; appCode?: string; message: string }> {
  const err = await p.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(err, "expected a refusal").toBeInstanceOf(TRPCClientError);
  const e = err as { data?: { code?: string; appCode?: string }; message: string };
  return { code: e.data?.code, appCode: e.data?.appCode, message: e.message };
}

describe("an agent's token", () => {
  it("every procedure of the router has a rule for agents", () => {
    const procedures = Object.keys((appRouter as unknown as { _def: { procedures: Record<string, unknown> } })._def.procedures).sort();
    expect(Object.keys(AGENT_RULES).sort()).toEqual(procedures);
  });

  it("acts on itself and its children only: spawn, list, stop; never another agent, accounts, runs, daemons, events or approvals", async () => {
    const parent = await human.agents.spawn.mutate({ provider: "fake", repo: w.repo, prompt: quick("parent") });
    const stranger = await human.agents.spawn.mutate({ provider: "fake", repo: w.repo, prompt: quick("stranger") });
    const a = as(parent.id);

    expect((await a.agents.get.query({ agentId: parent.alias })).id).toBe(parent.id);
    // a child: the parent's repo by default, recorded as its child
    const child = await a.agents.spawn.mutate({ provider: "fake", prompt: quick("child") });
    expect(child).toMatchObject({ parentAgentId: parent.id, repoPath: parent.repoPath });
    expect((await a.agents.list.query()).items.map((x) => x.id).sort()).toEqual([parent.id, child.id].sort());
    await waitForAgent(human, child.id);
    expect((await a.agents.changes.query({ agentId: child.alias })).files).toEqual([]);

    for (const call of [
      () => a.agents.get.query({ agentId: stranger.id }),
      () => a.agents.delete.mutate({ agentId: stranger.alias, force: true }),
      () => a.agents.stop.mutate({ agentId: stranger.id }),
      () => a.agents.message.mutate({ agentId: stranger.id, text: "hi" }),
      () => a.agents.decide.mutate({ approvalId: "appr_x", allow: true }),
      () => a.agents.sweep.mutate(),
      () => a.accounts.list.query(),
      () => a.runs.list.query(),
      () => a.daemons.list.query(),
      () => a.events.list.query({ afterId: 0, limit: 10 }),
      () => a.inbox.list.query(),
    ]) {
      expect(await refusal(call())).toMatchObject({ code: "FORBIDDEN", appCode: "AGENT_FORBIDDEN" });
    }
    // the stranger is untouched; the human can still do everything
    expect((await human.agents.get.query({ agentId: stranger.id })).id).toBe(stranger.id);
    expect(await human.accounts.list.query()).toEqual([]);

    // a child may not act on its parent or its sibling
    const sibling = await a.agents.spawn.mutate({ provider: "fake", prompt: quick("sibling") });
    const c = as(child.id);
    expect(await refusal(c.agents.stop.mutate({ agentId: parent.id }))).toMatchObject({ appCode: "AGENT_FORBIDDEN" });
    expect(await refusal(c.agents.delete.mutate({ agentId: sibling.id, force: true }))).toMatchObject({ appCode: "AGENT_FORBIDDEN" });
    expect((await a.agents.stop.mutate({ agentId: sibling.id })).id).toBe(sibling.id);
  });

  it("asks anyone, answers what was asked of it, and never answers for another", async () => {
    const asker = await human.agents.spawn.mutate({ provider: "fake", repo: w.repo, prompt: quick("asker") });
    const other = await human.agents.spawn.mutate({ provider: "fake", repo: w.repo, prompt: quick("other") });
    const q = await as(asker.id).conversations.ask.mutate({ fromAgentId: asker.id, toAgentId: "human", question: "ok to go on?" });
    expect(await refusal(as(asker.id).conversations.ask.mutate({ fromAgentId: other.id, toAgentId: "human", question: "forged" }))).toMatchObject({ appCode: "AGENT_FORBIDDEN" });
    expect(await refusal(as(other.id).conversations.answer.mutate({ conversationId: q.id, answer: "yes" }))).toMatchObject({ appCode: "AGENT_FORBIDDEN" });
    expect(await refusal(as(other.id).conversations.get.query({ conversationId: q.id }))).toMatchObject({ appCode: "AGENT_FORBIDDEN" });
    expect((await as(asker.id).conversations.get.query({ conversationId: q.id })).status).toBe("pending");
    const toOther = await as(asker.id).conversations.ask.mutate({ fromAgentId: asker.id, toAgentId: other.id, question: "which port?" });
    expect((await as(other.id).conversations.pending.query({ agentId: other.id })).map((x) => x.id)).toContain(toOther.id);
    expect(await refusal(as(asker.id).conversations.pending.query({ agentId: other.id }))).toMatchObject({ appCode: "AGENT_FORBIDDEN" });
    await as(other.id).conversations.answer.mutate({ conversationId: toOther.id, answer: "8080" });
    expect((await human.conversations.get.query({ conversationId: toOther.id })).answer).toBe("8080");
  });

  it("stopping a parent stops the agents it spawned only with cascade", async () => {
    const long = (name: string) => fakeAgentPrompt(name, [{ text: `${name} working` }, { sleep: 60_000 }, { done: `${name} done` }]);
    const parent = await human.agents.spawn.mutate({ provider: "fake", repo: w.repo, prompt: long("boss") });
    const kept = await as(parent.id).agents.spawn.mutate({ provider: "fake", prompt: long("kept") });
    await human.agents.stop.mutate({ agentId: parent.id });
    expect((await human.agents.get.query({ agentId: kept.id })).status).toBe("running");
    await human.agents.message.mutate({ agentId: parent.id, text: "go on" });
    const child = await as(parent.id).agents.spawn.mutate({ provider: "fake", prompt: long("child") });
    const grandchild = await as(child.id).agents.spawn.mutate({ provider: "fake", prompt: long("grandchild") });
    await human.agents.stop.mutate({ agentId: parent.id, cascade: true });
    const after = await Promise.all([parent, child, grandchild].map((a) => human.agents.get.query({ agentId: a.id })));
    expect(after.map((a) => a.status)).toEqual(["stopped", "stopped", "stopped"]);
    await human.agents.stop.mutate({ agentId: kept.id });
  });

  it("agent trees have limits: depth 3 refused, a 6th child refused", async () => {
    const root = await human.agents.spawn.mutate({ provider: "fake", repo: w.repo, prompt: quick("root") });
    const one = await as(root.id).agents.spawn.mutate({ provider: "fake", prompt: quick("one") });
    const two = await as(one.id).agents.spawn.mutate({ provider: "fake", prompt: quick("two") });
    expect(await refusal(as(two.id).agents.spawn.mutate({ provider: "fake", prompt: quick("three") }))).toMatchObject({ code: "FORBIDDEN", appCode: "AGENT_TREE_TOO_DEEP" });
    for (let i = 0; i < 4; i++) await as(root.id).agents.spawn.mutate({ provider: "fake", prompt: quick(`kid${i}`) });
    const sixth = await refusal(as(root.id).agents.spawn.mutate({ provider: "fake", prompt: quick("kid5") }));
    expect(sixth).toMatchObject({ appCode: "AGENT_TOO_MANY_CHILDREN" });
    expect(sixth.message).toContain("SWITCHYARD_AGENT_MAX_CHILDREN");
  });

  it("uses daemons only with the daemons grant (list, trigger, snapshot; never spawn, stop or delete); a child never gets more than its parent", async () => {
    const d = await human.daemons.spawn.mutate({ name: "scope-watch", task: "Acknowledge each trigger.", model: "mock/echo" });
    const plain = await human.agents.spawn.mutate({ provider: "fake", repo: w.repo, prompt: quick("plain") });
    const granted = await human.agents.spawn.mutate({ provider: "fake", repo: w.repo, prompt: quick("granted"), grants: ["daemons"] });
    expect(plain.grants).toEqual([]);
    expect(granted.grants).toEqual(["daemons"]);

    // without the grant: refused, and the refusal says what would allow it
    for (const call of [() => as(plain.id).daemons.list.query(), () => as(plain.id).daemons.trigger.mutate({ id: d.id, payload: { n: 1 } }), () => as(plain.id).daemons.snapshot.query({ id: d.id })]) {
      const refused = await refusal(call());
      expect(refused).toMatchObject({ code: "FORBIDDEN", appCode: "AGENT_FORBIDDEN" });
      expect(refused.message).toMatch(/needs the "daemons" grant/);
    }

    // with it: list, trigger (the event is queued: the daemon gets it), snapshot
    const g = as(granted.id);
    expect((await g.daemons.list.query()).map((x) => x.id)).toContain(d.id);
    const { seq } = await g.daemons.trigger.mutate({ id: "scope-watch", payload: { from: "granted" } });
    expect(seq).toBeGreaterThanOrEqual(0);
    expect((await g.daemons.snapshot.query({ id: d.id })).id).toBe(d.id);
    for (const call of [() => g.daemons.stop.mutate({ id: d.id }), () => g.daemons.delete.mutate({ id: d.id }), () => g.daemons.spawn.mutate({ task: "mine", model: "mock/echo" }), () => g.accounts.list.query()]) {
      expect(await refusal(call())).toMatchObject({ appCode: "AGENT_FORBIDDEN" });
    }
    const http = (agentId: string) =>
      fetch(`${w.t.url}/daemons/${d.id}/trigger`, { method: "POST", headers: { authorization: `Bearer ${agentToken(agentSecrets(w.t.home, w.t.server.services.config.secretKey).mint, agentId)}`, "content-type": "application/json" }, body: "{}" });
    expect((await http(granted.id)).status).toBe(202);
    expect((await http(plain.id)).status).toBe(403);

    // a child: the grant only when asked and only from a parent that has it
    const helper = await g.agents.spawn.mutate({ provider: "fake", prompt: quick("helper"), grants: ["daemons"] });
    expect(helper).toMatchObject({ parentAgentId: granted.id, grants: ["daemons"] });
    expect((await as(helper.id).daemons.list.query()).map((x) => x.id)).toContain(d.id);
    const bare = await g.agents.spawn.mutate({ provider: "fake", prompt: quick("bare") });
    expect(bare.grants).toEqual([]);
    expect(await refusal(as(bare.id).daemons.list.query())).toMatchObject({ appCode: "AGENT_FORBIDDEN" });
    const escalation = await refusal(as(plain.id).agents.spawn.mutate({ provider: "fake", prompt: quick("sneaky"), grants: ["daemons"] }));
    expect(escalation).toMatchObject({ code: "FORBIDDEN", appCode: "AGENT_FORBIDDEN" });
    expect(escalation.message).toMatch(/only what it was granted/);
    expect((await human.agents.list.query()).items.filter((a) => a.parentAgentId === plain.id)).toEqual([]);
    expect(await refusal(human.agents.spawn.mutate({ provider: "fake", repo: w.repo, prompt: quick("x"), grants: ["accounts" as never] }))).toMatchObject({ code: "BAD_REQUEST" });
    await human.daemons.stop.mutate({ id: d.id });
  });

  it("cannot use the daemon protocol (/ws) or trigger a daemon over HTTP", async () => {
    const agent = await human.agents.spawn.mutate({ provider: "fake", repo: w.repo, prompt: quick("ws") });
    const token = agentToken(agentSecrets(w.t.home, w.t.server.services.config.secretKey).mint, agent.id);
    const status = await new Promise<number>((resolve) => {
      const ws = new WebSocket(`${w.t.url.replace("http", "ws")}/ws`, { headers: { authorization: `Bearer ${token}` } });
      ws.on("unexpected-response", (_req, res) => resolve(res.statusCode ?? 0));
      ws.on("open", () => {
        ws.close();
        resolve(101);
      });
      ws.on("error", () => undefined);
    });
    expect(status).toBe(403);
    const res = await fetch(`${w.t.url}/daemons/anything/trigger`, { method: "POST", headers: { authorization: `Bearer ${token}`, "content-type": "application/json" }, body: "{}" });
    expect(res.status).toBe(403);
  });
});
