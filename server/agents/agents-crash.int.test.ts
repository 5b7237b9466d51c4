import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createSwitchyardClient } from "../client";
import { makeRepo, waitForAgent } from "../testing/agents-world";
import { fakeAgentPrompt } from "../testing/fake-agent";
import { removeHome, spawnServer, tempHome, type ServerProcess } from "../testing/server-harness";

/**
 * kill -9 of the server while 10 agents write output: the agents are detached and keep going; the
 * restarted server re-attaches, persists the rest from the stored offsets, and finishes them all
 * with complete, ordered logs. None is left "running".
 */
let home: string;
let repo: string;
let server: ServerProcess | undefined;

beforeAll(() => {
  home = tempHome();
  repo = makeRepo();
});
afterAll(async () => {
  await server?.kill("SIGKILL");
  removeHome(home);
  removeHome(repo);
});

// 5 s of output each: all still write when the server is killed, however slowly they started
const LINES = 1000;

describe("agents across a kill -9 of the server", () => {
  it("re-attaches live agents after a restart: all finish, logs complete and in order", async () => {
    server = await spawnServer({ home, env: { SWITCHYARD_LOG_LEVEL: "warn", SWITCHYARD_AGENT_CLEANUP: "off", SWITCHYARD_AGENT_AUTOCOMMIT: "off" } });
    const port = server.port;
    let client = createSwitchyardClient({ url: server.url });
    const agents = await Promise.all(
      Array.from({ length: 10 }, (_, i) =>
        client.agents.spawn.mutate({
          provider: "fake",
          repo,
          prompt: fakeAgentPrompt(`agent ${i}`, [{ lines: { count: LINES, perSecond: 200 } }, { done: `agent ${i} done` }]),
        }),
      ),
    );
    // once all ten write (a busy machine starts them slowly), let them go on a little, then kill the
    // server hard mid-stream
    await Promise.all(agents.map((a) => waitForAgent(client, a.id, ["running", "idle", "crashed", "stopped", "waiting_for_input"], 30_000)));
    await new Promise((r) => setTimeout(r, 300));
    const before = await Promise.all(agents.map((a) => client.agents.get.query({ agentId: a.id })));
    expect(before.every((a) => a.status === "running")).toBe(true);
    expect(await server.kill("SIGKILL")).toBe(null);
    // the agents keep running without us
    await new Promise((r) => setTimeout(r, 500));
    for (const a of before) expect(() => process.kill(a.pid!, 0)).not.toThrow();

    server = await spawnServer({ home, port, env: { SWITCHYARD_LOG_LEVEL: "warn", SWITCHYARD_AGENT_CLEANUP: "off", SWITCHYARD_AGENT_AUTOCOMMIT: "off" } });
    client = createSwitchyardClient({ url: server.url });
    const done = await Promise.all(agents.map((a) => waitForAgent(client, a.id, ["idle", "crashed", "stopped", "waiting_for_input"], 60_000)));
    expect(done.map((d) => d.status)).toEqual(Array(10).fill("idle"));
    expect(done.map((d) => d.result)).toEqual(agents.map((_, i) => `agent ${i} done`));
    for (const a of done) {
      const out = await client.agents.output.query({ agentId: a.id, fromLine: 0, limit: 5000, format: "raw" });
      const texts = out.lines.map((l) => JSON.parse(l.raw!) as { type: string; message?: { content: Array<{ text?: string }> } });
      const numbers = texts.filter((t) => t.type === "assistant").map((t) => Number(/^line (\d+)/.exec(t.message!.content[0]!.text ?? "")?.[1]));
      expect(numbers).toEqual(Array.from({ length: LINES }, (_, i) => i)); // complete, in order, no repeats
      expect(texts[0]!.type).toBe("system");
      expect(texts.at(-1)!.type).toBe("result");
      expect(out.totalLines).toBe(LINES + 2);
    }
    const running = await client.agents.list.query({ status: ["starting", "running"] });
    expect(running).toEqual({ items: [], nextCursor: null });
  });
});
