import { execFileSync } from "node:child_process";
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { TRPCClientError } from "@trpc/client";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createSwitchyardClient } from "../../client";
import { createTestDatabase, pgBinDirs, type TestDatabase } from "../../testing/postgres";
import { removeHome, spawnServer, tempHome, type ServerProcess } from "../../testing/server-harness";

/**
 * The database stops under a running server and comes back (a PostgreSQL restart, a failover):
 * requests in between fail with DB_UNAVAILABLE (503, saying to try again), the server stays up,
 * and once the database is back it serves again, events included, without a restart. On a
 * throwaway cluster of this test's own (SWITCHYARD_TEST_PG=cluster), so the machine's PostgreSQL
 * is never stopped.
 */
const KEY = "db-restart-test-secret-key-0123456789abcdef";
let pg: TestDatabase;
let home: string;
let server: ServerProcess | undefined;

beforeAll(async () => {
  pg = await createTestDatabase({ env: { ...process.env, SWITCHYARD_TEST_PG: "cluster" } });
  home = tempHome();
});

afterAll(async () => {
  await server?.kill("SIGKILL");
  removeHome(home);
  await pg?.drop();
});

/** pg_ctl on the cluster, as the user that owns it (nobody when the tests run as root). */
function pgCtl(...args: string[]): void {
  const bin = pgBinDirs().find((d) => existsSync(join(d, "pg_ctl")));
  if (!bin || !pg.clusterDir) throw new Error("no throwaway cluster to restart");
  const data = join(pg.clusterDir, "data");
  const cmd = process.getuid?.() === 0 ? ["runuser", "-u", "nobody", "--", join(bin, "pg_ctl")] : [join(bin, "pg_ctl")];
  execFileSync(cmd[0]!, [...cmd.slice(1), "-D", data, ...args], { stdio: "pipe", env: { PATH: process.env.PATH ?? "/usr/bin:/bin", LC_ALL: "C" } });
}

describe("the database restarted under a running server", () => {
  it("requests fail with DB_UNAVAILABLE while it is down, then work again without restarting the server", async () => {
    expect(pg.source).toBe("cluster");
    expect(readdirSync(pg.clusterDir!)).toContain("data");
    server = await spawnServer({ home, env: { SWITCHYARD_DATABASE_URL: pg.url, SWITCHYARD_SECRET_KEY: KEY, SWITCHYARD_LOG_LEVEL: "warn" } });
    const client = createSwitchyardClient({ url: server.url });
    await client.events.emit.mutate({ message: "before" });

    // the options it was started with (port, socket dir...), to start it again the same way
    const opts = [...readFileSync(join(pg.clusterDir!, "data", "postmaster.opts"), "utf8").matchAll(/"([^"]*)"/g)].map((m) => m[1]!);
    const startOpts = opts.slice(opts.indexOf("-D") + 2).join(" ");
    pgCtl("-m", "fast", "-w", "stop");
    const err = await client.events.emit.mutate({ message: "while down" }).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(err).toBeInstanceOf(TRPCClientError);
    const e = err as { message: string; data?: { appCode?: string; httpStatus?: number } };
    expect(e.data?.appCode).toBe("DB_UNAVAILABLE");
    expect(e.data?.httpStatus).toBe(503);
    expect(e.message).toMatch(/try again/i);
    // the server itself is up
    expect(server.proc.exitCode).toBeNull();
    expect((await fetch(`${server.url}/health`)).status).toBe(200);

    pgCtl("-l", join(pg.clusterDir!, "log"), "-o", startOpts, "-w", "-t", "30", "start");
    // back: the pool reconnects by itself
    const deadline = Date.now() + 20_000;
    let after: { id: number } | undefined;
    while (!after && Date.now() < deadline) {
      after = await client.events.emit.mutate({ message: "after" }).catch(() => undefined);
      if (!after) await new Promise((r) => setTimeout(r, 250));
    }
    expect(after?.id).toBeGreaterThan(0);
    const { events } = await client.events.list.query({ afterId: 0, limit: 100 });
    const messages = events.map((ev) => (ev.payload as { message?: string }).message);
    expect(messages).toContain("before");
    expect(messages).toContain("after");
    expect(messages).not.toContain("while down");
    // a live subscriber is served again (the LISTEN connection came back too)
    const seen = new Promise<string>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error("no live event after the restart")), 15_000);
      const sub = client.events.onEvent.subscribe(
        {},
        {
          onData: (d) => {
            const msg = ((d as { data: { payload?: { message?: string } } }).data.payload ?? {}).message;
            if (msg === "live after") {
              clearTimeout(timer);
              sub.unsubscribe();
              resolve(msg);
            }
          },
          onError: (er) => reject(er instanceof Error ? er : new Error(String(er))),
        },
      );
      setTimeout(() => void client.events.emit.mutate({ message: "live after" }), 500);
    });
    expect(await seen).toBe("live after");
  }, 90_000);
});
