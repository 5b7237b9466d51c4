import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startFakeModelServer, type FakeModelServer } from "../testing/fake-model";
import { removeHome, startTestServer, tempHome, type TestServer } from "../testing/server-harness";

/** Daemons through the real server: tRPC spawn, the HTTP webhook, the model sees triggers in order. */
let fake: FakeModelServer;
let t: TestServer;

beforeAll(async () => {
  fake = await startFakeModelServer();
  t = await startTestServer({ env: { ANTHROPIC_BASE_URL: fake.url, ANTHROPIC_API_KEY: "k" } });
});

afterAll(async () => {
  await t.stop();
  await fake.close();
  removeHome(t.home);
});

describe("daemons through the server", () => {
  it("spawns over tRPC, takes triggers over the webhook in order, and refuses a full queue with 429", async () => {
    const d = await t.client.daemons.spawn.mutate({ task: "Summarize each trigger.", model: "anthropic/claude-daemon", eventQueueCapacity: 50 });
    expect(d.id).toMatch(/^daemon_/);
    for (let i = 0; i < 5; i++) {
      const res = await fetch(`${t.url}/daemons/${d.id}/trigger`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ n: i }) });
      expect(res.status).toBe(202);
    }
    const deadline = Date.now() + 20_000;
    const seen = () => fake.requests.map((r) => r.script.lastUserText).filter((text) => /"n":\d/.test(text));
    while (seen().length < 5 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
    expect(seen().map((text) => Number(/"n":(\d)/.exec(text)![1]))).toEqual([0, 1, 2, 3, 4]);

    const missing = await fetch(`${t.url}/daemons/daemon_00000000-0000-7000-8000-000000000000/trigger`, { method: "POST", headers: { "content-type": "application/json" }, body: "{}" });
    expect(missing.status).toBe(404);

    await t.client.daemons.stop.mutate({ id: d.id });
    const stopped = await fetch(`${t.url}/daemons/${d.id}/trigger`, { method: "POST", headers: { "content-type": "application/json" }, body: "{}" });
    expect(stopped.status).toBe(409);
    const list = await t.client.daemons.list.query();
    expect(list.find((x) => x.id === d.id)?.status).toBe("stopped");
  });

  it("refuses a persistPath outside the allowed roots", async () => {
    const outside = tempHome("switchyard-outside-");
    await expect(t.client.daemons.spawn.mutate({ task: "x", persistPath: outside })).rejects.toThrow(/allowed|root/i);
    removeHome(outside);
  });
});
