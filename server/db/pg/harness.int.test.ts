import { spawn } from "node:child_process";
import { existsSync, statSync } from "node:fs";
import { createServer } from "node:net";
import postgres from "postgres";
import { describe, expect, it } from "vitest";
import { REPO_ROOT } from "../../paths";
import { createTestDatabase, TestPostgresUnavailable } from "../../testing/postgres";
import { closePg, openPg } from "./client";

/** server/testing/postgres.ts: one fresh database per caller, from the local server or a throwaway cluster. */

async function query<T extends postgres.Row>(url: string, text: string): Promise<T[]> {
  const sql = postgres(url, { max: 1, connect_timeout: 2, onnotice: () => {} });
  try {
    return (await sql.unsafe(text)) as unknown as T[];
  } finally {
    await sql.end({ timeout: 2 });
  }
}

const adminOf = (url: string) => Object.assign(new URL(url), { pathname: "/postgres" }).toString();
const exists = async (url: string, name: string) => (await query<{ n: number }>(adminOf(url), `SELECT count(*)::int AS n FROM pg_database WHERE datname = '${name}'`))[0]!.n === 1;

async function closedPort(): Promise<number> {
  return new Promise((resolve) => {
    const srv = createServer().listen(0, "127.0.0.1", () => {
      const { port } = srv.address() as { port: number };
      srv.close(() => resolve(port));
    });
  });
}

describe("the PostgreSQL test harness", () => {
  it("gives each caller its own empty UTF-8 database and drops it after", async () => {
    const [a, b] = await Promise.all([createTestDatabase(), createTestDatabase()]);
    try {
      expect(["env", "local", "cluster"]).toContain(a.source);
      expect(a.name).not.toBe(b.name);
      expect(a.name).toMatch(new RegExp(`^switchyard_test_${process.pid}_`));
      const [info] = await query<{ db: string; enc: string; tables: number }>(
        a.url,
        "SELECT current_database() AS db, pg_encoding_to_char(encoding) AS enc, (SELECT count(*)::int FROM pg_tables WHERE schemaname = 'public') AS tables FROM pg_database WHERE datname = current_database()",
      );
      expect(info).toEqual({ db: a.name, enc: "UTF8", tables: 0 });
    } finally {
      await a.drop();
    }
    expect(await exists(b.url, a.name)).toBe(false);
    expect(await exists(b.url, b.name)).toBe(true);
    await b.drop();
  });

  it("SWITCHYARD_TEST_PG=cluster: a throwaway cluster (initdb + pg_ctl as an unprivileged user), migrated by openPg, stopped and removed with its database", async () => {
    const started = performance.now();
    const pg = await createTestDatabase({ env: { SWITCHYARD_TEST_PG: "cluster" } });
    const startMs = performance.now() - started;
    const dir = pg.clusterDir!;
    try {
      expect(pg.source).toBe("cluster");
      expect(existsSync(dir)).toBe(true);
      if (process.getuid?.() === 0) expect(statSync(dir).uid).not.toBe(0); // initdb refuses root
      const port = Number(new URL(pg.url).port);
      expect(port).not.toBe(5432);
      const db = await openPg({ url: pg.url });
      try {
        await db.insert((await import("./schema")).runs).values({ id: "r1", cwd: "/", strategyName: "s", strategyPath: "/s", status: "completed", segment: 1, startedAt: 1 });
      } finally {
        await closePg(db);
      }
      const [dirRow] = await query<{ data_directory: string }>(pg.url, "SELECT current_setting('data_directory') AS data_directory");
      expect(dirRow!.data_directory.startsWith(dir)).toBe(true);
    } finally {
      await pg.drop();
    }
    expect(existsSync(dir)).toBe(false);
    await expect(query(pg.url, "SELECT 1")).rejects.toThrow(/ECONNREFUSED/);
    console.log(`throwaway cluster: started in ${Math.round(startMs)} ms`);
  });

  it("a test process killed before its afterAll leaves no cluster behind (the watchdog stops it and removes its dir)", async () => {
    const code =
      'import { createTestDatabase } from "./server/testing/postgres.ts"; const pg = await createTestDatabase({ env: { SWITCHYARD_TEST_PG: "cluster" } }); console.log(JSON.stringify({ dir: pg.clusterDir, url: pg.url })); setInterval(() => {}, 1000);';
    const child = spawn(process.execPath, ["--import", "tsx", "--input-type=module", "-e", code], { cwd: REPO_ROOT, stdio: ["ignore", "pipe", "pipe"] });
    let out = "";
    child.stderr.on("data", (d: Buffer) => (out += d.toString()));
    const line = await new Promise<string>((resolve, reject) => {
      child.stdout.on("data", (d: Buffer) => {
        out += d.toString();
        if (out.includes("}\n")) resolve(out.slice(0, out.indexOf("}\n") + 1));
      });
      child.once("exit", () => reject(new Error(`child exited first:\n${out}`)));
    });
    const { dir, url } = JSON.parse(line) as { dir: string; url: string };
    expect((await query<{ one: number }>(url, "SELECT 1 AS one"))[0]).toEqual({ one: 1 });
    child.kill("SIGKILL");
    const deadline = Date.now() + 10_000;
    while (existsSync(dir) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 100));
    expect(existsSync(dir)).toBe(false);
    await expect(query(url, "SELECT 1")).rejects.toThrow(/ECONNREFUSED/);
  });

  it("no PostgreSQL anywhere: an error that says how to get one, never a skip", async () => {
    const port = await closedPort();
    const err = await createTestDatabase({ env: {}, localUrl: `postgres://postgres@127.0.0.1:${port}/postgres`, binDirs: ["/nonexistent/postgresql/bin"] }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(TestPostgresUnavailable);
    expect((err as Error).message).toMatch(/nothing usable at postgres:\/\/postgres@127\.0\.0\.1:\d+\/postgres \(.*ECONNREFUSED.*\)/);
    expect((err as Error).message).toContain("apt-get install postgresql");
    expect((err as Error).message).toContain("SWITCHYARD_TEST_DATABASE_URL=postgres://");
  });

  it("SWITCHYARD_TEST_DATABASE_URL is used when set, and one that does not answer is an error (no fallback)", async () => {
    const local = await createTestDatabase();
    try {
      const viaEnv = await createTestDatabase({ env: { SWITCHYARD_TEST_DATABASE_URL: adminOf(local.url) } });
      expect(viaEnv.source).toBe("env");
      expect(await exists(viaEnv.url, viaEnv.name)).toBe(true);
      await viaEnv.drop();
      const port = await closedPort();
      await expect(createTestDatabase({ env: { SWITCHYARD_TEST_DATABASE_URL: `postgres://x:pw@127.0.0.1:${port}/postgres` } })).rejects.toThrow(
        /SWITCHYARD_TEST_DATABASE_URL does not answer \(.*ECONNREFUSED.*\)/,
      );
    } finally {
      await local.drop();
    }
  });
});
