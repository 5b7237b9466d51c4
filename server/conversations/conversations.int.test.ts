import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startAgentsWorld, waitForAgent, type AgentsWorld } from "../testing/agents-world";
import { fakeAgentPrompt } from "../testing/fake-agent";

/**
 * Agents asking each other through the real `yard` CLI from inside their processes (their env
 * carries the server URL, their id and an agent token), and an agent asking a human.
 */
let w: AgentsWorld;
beforeAll(async () => {
  w = await startAgentsWorld();
});
afterAll(async () => {
  await w?.stop();
});

const output = async (agentId: string) => (await w.t.client.agents.output.query({ agentId, limit: 200 })).lines.flatMap((l) => l.events);

describe("conversations", () => {
  it("one agent asks another by task label; the other listens and answers; the asker prints the answer", async () => {
    const answerer = await w.t.client.agents.spawn.mutate({
      provider: "fake",
      repo: w.repo,
      taskId: "backend",
      prompt: fakeAgentPrompt("answer questions", [
        { bash: 'yard listen --agent-id "$SWITCHYARD_AGENT_ID" > "$SWITCHYARD_LISTEN_FILE" && cat "$SWITCHYARD_LISTEN_FILE"' },
        { bash: `yard answer "port 8080" --conversation-id "$(node -e 'process.stdout.write(JSON.parse(require("fs").readFileSync(process.env.SWITCHYARD_LISTEN_FILE,"utf8")).conversationId)')"` },
        { done: "answered one question" },
      ]),
    });
    await waitForAgent(w.t.client, answerer.id, ["running"]);
    const asker = await w.t.client.agents.spawn.mutate({
      provider: "fake",
      repo: w.repo,
      prompt: fakeAgentPrompt("ask the backend", [{ bash: 'yard ask "Which port does the API use?" --from "$SWITCHYARD_AGENT_ID" --task-id backend --poll-interval 100 --timeout 30000' }, { done: "got it" }]),
    });
    const [a, b] = await Promise.all([waitForAgent(w.t.client, asker.id), waitForAgent(w.t.client, answerer.id)]);
    expect(a.status).toBe("idle");
    expect(b.status).toBe("idle");
    const askResult = (await output(asker.id)).find((e) => e.kind === "tool_result");
    expect(askResult).toMatchObject({ isError: false, output: "port 8080" });
    const listened = (await output(answerer.id)).find((e) => e.kind === "tool_result");
    const heard = JSON.parse(listened?.kind === "tool_result" ? listened.output : "{}") as Record<string, string>;
    expect(heard).toMatchObject({ fromAgentId: asker.id, question: "Which port does the API use?", taskId: "backend" });
    const conv = await w.t.client.conversations.get.query({ conversationId: heard.conversationId! });
    expect(conv).toMatchObject({ status: "answered", answer: "port 8080", fromAgentId: asker.id, toAgentId: answerer.id });
    expect(await w.t.client.conversations.list.query({ agentId: answerer.id })).toHaveLength(1);
  });

  it("a question to a human shows in the inbox and the agent gets the answer", async () => {
    const agent = await w.t.client.agents.spawn.mutate({
      provider: "fake",
      repo: w.repo,
      prompt: fakeAgentPrompt("ask a human", [{ bash: 'yard ask "Ship it today?" --from "$SWITCHYARD_AGENT_ID" --agent-id human --poll-interval 100' }, { done: "asked" }]),
    });
    let item;
    for (let i = 0; i < 200 && !item; i++) {
      item = (await w.t.client.inbox.list.query()).items.find((x) => x.kind === "conversation" && x.fromAgentId === agent.id);
      if (!item) await new Promise((r) => setTimeout(r, 100));
    }
    expect(item).toMatchObject({ kind: "conversation", question: "Ship it today?", alias: agent.alias });
    await w.t.client.conversations.answer.mutate({ conversationId: item!.id, answer: "Yes, before five" });
    await expect(w.t.client.conversations.answer.mutate({ conversationId: item!.id, answer: "again" })).rejects.toThrow(/already answered/);
    const done = await waitForAgent(w.t.client, agent.id);
    expect(done.status).toBe("idle");
    expect((await output(agent.id)).find((e) => e.kind === "tool_result")).toMatchObject({ output: "Yes, before five" });
    expect((await w.t.client.inbox.list.query()).items.some((x) => x.id === item!.id)).toBe(false);
  });

  it("rejects an ask without exactly one target, and an unknown task", async () => {
    const someone = (await w.t.client.agents.list.query({})).items[0]!;
    await expect(w.t.client.conversations.ask.mutate({ fromAgentId: someone.id, question: "?" })).rejects.toThrow(/exactly one/);
    await expect(w.t.client.conversations.ask.mutate({ fromAgentId: someone.id, question: "?", taskId: "nobody" })).rejects.toThrow(/No agent works on task "nobody"/);
  });
});
