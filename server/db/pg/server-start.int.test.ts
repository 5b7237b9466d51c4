import { existsSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createSwitchyardClient } from "../../client";
import { removeHome, spawnServer, tempHome, type ServerProcess } from "../../testing/server-harness";
import { createTestDatabase, type TestDatabase } from "../../testing/postgres";

/** `yard start` with SWITCHYARD_DATABASE_URL: what a user sees when it works, and when it cannot. */
const KEY = "a-cluster-secret-key-for-this-test-0123456789";
let pg: TestDatabase;
const homes: string[] = [];
const servers: ServerProcess[] = [];

beforeAll(async () => {
  pg = await createTestDatabase();
});
afterAll(async () => {
  for (const s of servers) await s.kill("SIGKILL");
  for (const h of homes) removeHome(h);
  await pg?.drop();
});

function home(): string {
  const h = tempHome();
  homes.push(h);
  return h;
}

/** `yard start` that is expected to exit: its exit code and what it printed. */
async function refusedStart(env: Record<string, string>): Promise<{ code: number | null; out: string; home: string }> {
  const at = home();
  try {
    const s = await spawnServer({ home: at, env, timeoutMs: 30_000 });
    servers.push(s);
    return { code: null, out: s.output(), home: at };
  } catch (err) {
    const message = (err as Error).message;
    const code = /exited with (\d+)/.exec(message)?.[1];
    return { code: code === undefined ? null : Number(code), out: message, home: at };
  }
}

describe("a server on PostgreSQL", () => {
  it("runs on the database named by SWITCHYARD_DATABASE_URL and says so, without the password", async () => {
    const url = new URL(pg.url);
    url.password = "pw-not-needed-with-trust";
    const s = await spawnServer({ home: home(), env: { SWITCHYARD_DATABASE_URL: url.toString(), SWITCHYARD_SECRET_KEY: KEY } });
    servers.push(s);
    expect(s.output()).toMatch(/Store: +PostgreSQL at postgres:\/\/.*:\*+@/);
    expect(s.output()).not.toContain("pw-not-needed-with-trust");
    const client = createSwitchyardClient({ url: s.url });
    const emitted = await client.events.emit.mutate({ message: "stored in PostgreSQL" });
    expect(emitted.id).toBeGreaterThan(0);

    // a second server on the same database (a data dir of its own) runs beside it and sees its events
    const second = await spawnServer({ home: home(), env: { SWITCHYARD_DATABASE_URL: pg.url, SWITCHYARD_SECRET_KEY: KEY } });
    servers.push(second);
    const seen = await createSwitchyardClient({ url: second.url }).events.list.query({ afterId: 0, limit: 100 });
    expect(seen.events.map((e) => (e.payload as { message?: string }).message)).toContain("stored in PostgreSQL");

    // kill -9 of both: the next server starts and finds the event
    await s.kill("SIGKILL");
    await second.kill("SIGKILL");
    const next = await spawnServer({ home: home(), env: { SWITCHYARD_DATABASE_URL: pg.url, SWITCHYARD_SECRET_KEY: KEY } });
    servers.push(next);
    const events = await createSwitchyardClient({ url: next.url }).events.list.query({ afterId: 0, limit: 100 });
    expect(events.events.map((e) => (e.payload as { message?: string }).message)).toContain("stored in PostgreSQL");
  });

  it("an unreachable database: exit 2 naming the variable, never the password, nothing written to the data dir's SQLite", async () => {
    const r = await refusedStart({ SWITCHYARD_DATABASE_URL: "postgres://yard:hunter2-secret@127.0.0.1:1/nowhere", SWITCHYARD_SECRET_KEY: KEY });
    expect(r.code).toBe(2);
    expect(r.out).toContain("SWITCHYARD_DATABASE_URL");
    expect(r.out).toContain("Cannot connect to PostgreSQL");
    expect(r.out).not.toContain("hunter2-secret");
    expect(existsSync(join(r.home, "switchyard.db"))).toBe(false);
  });

  it("without SWITCHYARD_SECRET_KEY: exit 2 saying why it is needed", async () => {
    const r = await refusedStart({ SWITCHYARD_DATABASE_URL: pg.url });
    expect(r.code).toBe(2);
    expect(r.out).toContain("SWITCHYARD_SECRET_KEY: required with SWITCHYARD_DATABASE_URL");
  });
});
