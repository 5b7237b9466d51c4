import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import postgres from "postgres";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createSwitchyardClient } from "../../client";
import { startFakeModelServer, type FakeModelServer } from "../../testing/fake-model";
import { createTestDatabase, type TestDatabase } from "../../testing/postgres";
import { removeHome, spawnServer, tempHome, type ServerProcess } from "../../testing/server-harness";

/**
 * PostgreSQL ends the server's connections while runs stream into it (what a restart or a
 * failover of the database does, or an operator's pg_terminate_backend), many times over: the
 * server stays up (postgres.js 3.4.9 alone would crash it on the first: connection-loss.ts), and
 * once its connections are back it works as before.
 */
let pg: TestDatabase;
let fake: FakeModelServer;
let cwd: string;
let home: string;
let server: ServerProcess | undefined;

beforeAll(async () => {
  pg = await createTestDatabase();
  fake = await startFakeModelServer();
  cwd = tempHome("switchyard-connloss-cwd-");
  home = tempHome();
  mkdirSync(join(cwd, "strategies"));
  writeFileSync(join(cwd, "strategies", "long.yaml"), `name: Long\nversion: "1.0"\nagents:\n  talker: {model: anthropic/m, systemPrompt: "LONG[100000] DELAY[2]"}\nflow: {type: sequential, steps: [{agent: talker}]}\n`);
  writeFileSync(join(cwd, "strategies", "short.yaml"), `name: Short\nversion: "1.0"\nagents:\n  talker: {model: anthropic/m, systemPrompt: "SAY[after the storm]"}\nflow: {type: sequential, steps: [{agent: talker}]}\n`);
});

afterAll(async () => {
  await server?.kill("SIGKILL");
  await fake?.close();
  removeHome(home);
  removeHome(cwd);
  await pg?.drop();
});

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe("connections lost under a running server", () => {
  it("survives its connections ended ten times while three runs stream, then serves runs and events as before", async () => {
    server = await spawnServer({
      home,
      env: { SWITCHYARD_DATABASE_URL: pg.url, SWITCHYARD_SECRET_KEY: "connection-loss-test-key-0123456789abcdef", ANTHROPIC_BASE_URL: fake.url, ANTHROPIC_API_KEY: "k", SWITCHYARD_LOG_LEVEL: "warn" },
    });
    const client = createSwitchyardClient({ url: server.url });
    for (let i = 0; i < 3; i++) {
      const run = await client.runs.prepare.mutate({ strategyPath: "strategies/long.yaml", cwd });
      await client.runs.start.mutate({ runId: run.runId, input: "talk" });
    }
    await sleep(1500);
    const admin = postgres(pg.url, { max: 1, onnotice: () => {} });
    try {
      let ended = 0;
      for (let round = 0; round < 10; round++) {
        const gone = await admin`SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE application_name = 'switchyard' AND datname = current_database() AND pid <> pg_backend_pid()`;
        ended += gone.length;
        await sleep(700);
        expect(server.proc.exitCode, server.output()).toBeNull();
      }
      expect(ended).toBeGreaterThanOrEqual(10);
    } finally {
      await admin.end({ timeout: 5 });
    }
    expect(server.output()).not.toContain("PostgreSQL closed a connection of this server inside a transaction");

    // back to normal: a new run goes through, its events arrive in order
    const { lastId } = await client.events.list.query({ limit: 1 });
    const deadline = Date.now() + 20_000;
    let result: string | undefined;
    for (;;) {
      const run = await client.runs.prepare.mutate({ strategyPath: "strategies/short.yaml", cwd }).catch(() => undefined);
      if (run) {
        await client.runs.start.mutate({ runId: run.runId, input: "go" });
        for (let i = 0; i < 100 && !result; i++) {
          const r = await client.runs.get.query({ runId: run.runId });
          if (r.status === "completed") result = r.result ?? "";
          else await sleep(100);
        }
      }
      if (result !== undefined || Date.now() > deadline) break;
    }
    expect(result).toContain("after the storm");
    const after = await client.events.list.query({ afterId: lastId, limit: 5000 });
    const ids = after.events.map((e) => e.id);
    expect(ids.length).toBeGreaterThan(0);
    expect(ids).toEqual([...ids].sort((a, b) => a - b));
    expect((await client.health.query()).status).toBe("ok");
  }, 120_000);
});
