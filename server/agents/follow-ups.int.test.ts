import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { startAgentsWorld, waitForAgent, type AgentsWorld } from "../testing/agents-world";
import { fakeAgentPrompt } from "../testing/fake-agent";
import { agentTestHooks } from "./agents.service";

/**
 * Follow-ups are never lost (issue: complete() read the queue, awaited, then wrote it back empty,
 * while message() still queued because the row still said running). The window is forced with a
 * test hook in completion, then hit naturally many times over.
 */

let w: AgentsWorld;
beforeAll(async () => {
  w = await startAgentsWorld();
});
afterAll(async () => {
  await w?.stop();
});
afterEach(() => {
  agentTestHooks.beforeCompletionWrite = undefined;
});

/** What the fake CLI itself printed ("Resumed: <prompt head>" on a resume): proof a follow-up reached it. */
async function textsOf(agentId: string): Promise<string[]> {
  const out = await w.t.client.agents.output.query({ agentId, fromLine: 0, limit: 2000 });
  return out.lines.flatMap((l) => l.events).flatMap((e) => (e.kind === "text" ? [e.text] : []));
}

/**
 * Until the agent is idle with no follow-up left to deliver (a delivery starts another run), or
 * idle with one still queued for `strandedMs` (a stranded follow-up: lost).
 */
async function settledIdle(agentId: string, strandedMs = 3000, timeoutMs = 60_000) {
  const deadline = Date.now() + timeoutMs;
  let strandedSince: number | undefined;
  for (;;) {
    const a = await waitForAgent(w.t.client, agentId, ["idle", "crashed", "stopped", "waiting_for_input"], timeoutMs);
    if (a.queuedMessages.length === 0) return a;
    strandedSince ??= Date.now();
    if (Date.now() - strandedSince > strandedMs || Date.now() > deadline) return a;
    await new Promise((r) => setTimeout(r, 50));
  }
}

describe("a follow-up sent while the agent finishes", () => {
  it("forced: sent between completion's read and its write, it is queued and then delivered", async () => {
    const agent = await w.t.client.agents.spawn.mutate({ provider: "fake", repo: w.repo, prompt: fakeAgentPrompt("quick", [{ text: "working" }, { done: "first done" }]) });
    let sent: { delivered: string } | undefined;
    agentTestHooks.beforeCompletionWrite = async (id) => {
      if (id !== agent.id || sent) return;
      sent = await w.t.client.agents.message.mutate({ agentId: agent.id, text: "FOLLOW-UP in the window" });
    };
    const done = await settledIdle(agent.id);
    expect(sent?.delivered).toBe("queued");
    expect(done.status).toBe("idle");
    expect(done.sessionNumber).toBe(2);
    expect(await textsOf(agent.id)).toContain("Resumed: FOLLOW-UP in the window");
    const events = (await w.t.client.events.list.query({ scope: { kind: "agent", id: agent.id }, limit: 500 })).events;
    expect(events.filter((e) => e.type === "agent.resumed").map((e) => (e.payload as { reason: string }).reason)).toEqual(["message"]);
  });

  it("natural: 200 follow-ups sent at random moments around completion, every one delivered exactly once", async () => {
    const ATTEMPTS = 200;
    const PARALLEL = 20;
    const lost: string[] = [];
    const twice: string[] = [];
    const one = async (i: number) => {
      const think = Math.floor(Math.random() * 150);
      const agent = await w.t.client.agents.spawn.mutate({ provider: "fake", repo: w.repo, prompt: fakeAgentPrompt(`race ${i}`, [{ sleep: think }, { done: `done ${i}` }]) });
      await new Promise((r) => setTimeout(r, Math.floor(Math.random() * 400)));
      const text = `follow-up ${i}`;
      await w.t.client.agents.message.mutate({ agentId: agent.id, text });
      await settledIdle(agent.id);
      const got = (await textsOf(agent.id)).filter((t) => t === `Resumed: ${text}`).length;
      if (got === 0) lost.push(text);
      if (got > 1) twice.push(text);
    };
    for (let start = 0; start < ATTEMPTS; start += PARALLEL) {
      await Promise.all(Array.from({ length: Math.min(PARALLEL, ATTEMPTS - start) }, (_, k) => one(start + k)));
    }
    console.log(`follow-ups: ${ATTEMPTS} sent, ${lost.length} lost, ${twice.length} delivered twice`);
    expect({ lost, twice }).toEqual({ lost: [], twice: [] });
  }, 600_000);
});
