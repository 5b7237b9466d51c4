import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { loadConfig } from "../config";
import { removeHome, startTestServer, type TestServer } from "../testing/server-harness";

/** SWITCHYARD_SECRET_KEY (the cluster's secret): validated, used, and never shown. */
const KEY = "s3cr3t-cluster-key-".repeat(3);
let t: TestServer;

beforeAll(async () => {
  t = await startTestServer({ env: { SWITCHYARD_SECRET_KEY: KEY, SWITCHYARD_LOG_LEVEL: "debug" } });
});
afterAll(async () => {
  await t?.stop();
  if (t) removeHome(t.home);
});

describe("SWITCHYARD_SECRET_KEY", () => {
  it("a short key is refused, naming the variable but not the value", () => {
    let message = "";
    try {
      loadConfig({ SWITCHYARD_SECRET_KEY: "too-short-secret-value" });
    } catch (err) {
      message = (err as Error).message;
    }
    expect(message).toContain("SWITCHYARD_SECRET_KEY: must be at least 32 characters");
    expect(message).not.toContain("too-short-secret-value");
  });

  it("never appears in /health, the event log or the server's logs", async () => {
    const health = JSON.stringify(await t.client.health.query());
    const events = JSON.stringify((await t.client.events.list.query({ afterId: 0, limit: 1000 })).events);
    const logs = t.logs.join("\n");
    expect(health).not.toContain(KEY);
    expect(events).not.toContain(KEY);
    expect(logs).not.toContain(KEY);
    expect(t.server.services.agents.agentOfToken("sya.agent_x.forged")).toBeNull();
  });
});
