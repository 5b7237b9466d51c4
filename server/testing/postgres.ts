import { execFile, spawn } from "node:child_process";
import { chmodSync, chownSync, existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import postgres from "postgres";
import { processAlive } from "../lib/process-alive";

/**
 * Test support: a fresh PostgreSQL database per test file. The server comes from
 * SWITCHYARD_TEST_DATABASE_URL, else the one at 127.0.0.1:5432 when it answers (as user postgres),
 * else a throwaway cluster started here with Debian's initdb/pg_ctl in a temp dir (as `nobody`
 * when running as root: initdb refuses root), on a free port, stopped with the last database.
 * SWITCHYARD_TEST_PG=cluster forces the throwaway cluster. No PostgreSQL at all is an error that
 * says how to get one, never a skip.
 *
 *   const pg = await createTestDatabase();   // beforeAll
 *   ... openPg({ url: pg.url }) ...
 *   await pg.drop();                          // afterAll
 */

const run = promisify(execFile);

export type PgServerSource = "env" | "local" | "cluster";

export type TestDatabase = {
  /** postgres:// URL of the new, empty database. */
  url: string;
  name: string;
  source: PgServerSource;
  /** The throwaway cluster's temp dir (data, socket, log), removed when it stops. */
  clusterDir?: string;
  /** Drop the database (and stop the throwaway cluster after the last one). */
  drop(): Promise<void>;
};

export type TestPostgresOptions = {
  env?: NodeJS.ProcessEnv;
  /** The local server tried before a throwaway cluster. */
  localUrl?: string;
  /** Directories searched for initdb + pg_ctl (default /usr/lib/postgresql/<version>/bin, newest first). */
  binDirs?: string[];
};

type Server = { adminUrl: string; source: PgServerSource; clusterDir?: string; admin: postgres.Sql; stop(): Promise<void> };

export class TestPostgresUnavailable extends Error {
  constructor(message: string) {
    super(message);
    this.name = "TestPostgresUnavailable";
  }
}

const LOCAL_URL = "postgres://postgres@127.0.0.1:5432/postgres";
const HOW_TO_GET_ONE =
  "Install PostgreSQL (apt-get install postgresql: the tests start a throwaway cluster with its initdb/pg_ctl) " +
  "or set SWITCHYARD_TEST_DATABASE_URL=postgres://user:password@host:5432/postgres (a role allowed to CREATE DATABASE).";

let shared: Promise<Server> | undefined;
let live = 0;

/** A new, empty, uniquely named database on the test PostgreSQL (see the module comment). */
export async function createTestDatabase(options: TestPostgresOptions = {}): Promise<TestDatabase> {
  const custom = options.env !== undefined || options.localUrl !== undefined || options.binDirs !== undefined;
  const serverPromise = custom ? resolveServer(options) : (shared ??= resolveServer(options));
  let server: Server;
  try {
    server = await serverPromise;
  } catch (err) {
    if (!custom) shared = undefined;
    throw err;
  }
  if (!custom) live++;
  const name = `switchyard_test_${process.pid}_${Math.random().toString(36).slice(2, 10)}`;
  try {
    await server.admin.unsafe(`CREATE DATABASE "${name}" TEMPLATE template0 ENCODING 'UTF8' LC_COLLATE 'C' LC_CTYPE 'C'`);
  } catch (err) {
    await release(server, custom);
    throw err;
  }
  const url = new URL(server.adminUrl);
  url.pathname = `/${name}`;
  let dropped = false;
  return {
    url: url.toString(),
    name,
    source: server.source,
    ...(server.clusterDir ? { clusterDir: server.clusterDir } : {}),
    async drop() {
      if (dropped) return;
      dropped = true;
      try {
        await server.admin.unsafe(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`);
      } finally {
        await release(server, custom);
      }
    },
  };
}

/** After the last database of the shared server is dropped: close it (a cluster stops). */
async function release(server: Server, custom: boolean): Promise<void> {
  if (!custom) {
    live--;
    if (live > 0) return;
    shared = undefined;
  }
  await server.stop();
}

async function resolveServer(options: TestPostgresOptions): Promise<Server> {
  const env = options.env ?? process.env;
  const forced = env.SWITCHYARD_TEST_PG;
  if (forced !== undefined && forced !== "" && forced !== "cluster") {
    throw new TestPostgresUnavailable(`SWITCHYARD_TEST_PG=${forced}: the only value is "cluster" (force a throwaway cluster); unset it for the default order.`);
  }
  if (forced === "cluster") return startCluster(options.binDirs ?? pgBinDirs(), "SWITCHYARD_TEST_PG=cluster");
  const fromEnv = env.SWITCHYARD_TEST_DATABASE_URL;
  if (fromEnv) {
    const why = await probe(fromEnv);
    if (why !== null) throw new TestPostgresUnavailable(`SWITCHYARD_TEST_DATABASE_URL does not answer (${why}). Fix it or unset it to use 127.0.0.1:5432 or a throwaway cluster.`);
    return connect(fromEnv, "env", async () => {});
  }
  const localUrl = options.localUrl ?? LOCAL_URL;
  const localWhy = await probe(localUrl);
  if (localWhy === null) {
    await sweepAbandoned(localUrl);
    return connect(localUrl, "local", async () => {});
  }
  return startCluster(options.binDirs ?? pgBinDirs(), `nothing usable at ${redact(localUrl)} (${localWhy})`);
}

function connect(adminUrl: string, source: PgServerSource, after: () => Promise<void>, clusterDir?: string): Server {
  const admin = postgres(adminUrl, { max: 1, connect_timeout: 5, onnotice: () => {} });
  return {
    adminUrl,
    source,
    ...(clusterDir ? { clusterDir } : {}),
    admin,
    async stop() {
      await admin.end({ timeout: 5 });
      await after();
    },
  };
}

/** null when `url` answers a query, else why not. */
async function probe(url: string): Promise<string | null> {
  const sql = postgres(url, { max: 1, connect_timeout: 2, onnotice: () => {} });
  try {
    await sql`SELECT 1`;
    return null;
  } catch (err) {
    const e = err as Error & { code?: string };
    return e.message || e.code || String(err);
  } finally {
    await sql.end({ timeout: 1 });
  }
}

function redact(url: string): string {
  const u = new URL(url);
  if (u.password) u.password = "***";
  return u.toString();
}

/** Databases left by test processes that died before dropping them (their pid is gone). */
async function sweepAbandoned(adminUrl: string): Promise<void> {
  const sql = postgres(adminUrl, { max: 1, connect_timeout: 2, onnotice: () => {} });
  try {
    const rows = await sql<Array<{ datname: string }>>`SELECT datname FROM pg_database WHERE datname LIKE 'switchyard\\_test\\_%'`;
    for (const { datname } of rows) {
      const pid = Number(/^switchyard_test_(\d+)_/.exec(datname)?.[1]);
      if (!Number.isInteger(pid) || processAlive(pid)) continue;
      await sql.unsafe(`DROP DATABASE IF EXISTS "${datname}" WITH (FORCE)`).catch(() => undefined);
    }
  } finally {
    await sql.end({ timeout: 1 });
  }
}


/** Debian's server binaries, newest major version first. */
export function pgBinDirs(root = "/usr/lib/postgresql"): string[] {
  if (!existsSync(root)) return [];
  return readdirSync(root)
    .filter((v) => /^\d+$/.test(v))
    .sort((a, b) => Number(b) - Number(a))
    .map((v) => join(root, v, "bin"));
}

type RunAs = { uid: number; gid: number; user: string } | null;

/** initdb and postgres refuse root: as root, run them as `nobody` through runuser. */
function unprivileged(): RunAs {
  if (process.getuid?.() !== 0) return null;
  const line = readFileSync("/etc/passwd", "utf8")
    .split("\n")
    .find((l) => l.startsWith("nobody:"));
  const [, , uid, gid] = line?.split(":") ?? [];
  if (uid === undefined || gid === undefined) throw new TestPostgresUnavailable(`Running as root and there is no "nobody" user to run initdb/pg_ctl as. ${HOW_TO_GET_ONE}`);
  return { uid: Number(uid), gid: Number(gid), user: "nobody" };
}

function asUser(runAs: RunAs, bin: string, args: string[]): [string, string[]] {
  return runAs ? ["runuser", ["-u", runAs.user, "--", bin, ...args]] : [bin, args];
}

async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = createServer();
    srv.once("error", reject);
    srv.listen(0, "127.0.0.1", () => {
      const { port } = srv.address() as { port: number };
      srv.close(() => resolve(port));
    });
  });
}

/** A throwaway cluster: initdb in a temp dir, pg_ctl start on a free port; stop() removes it all. */
async function startCluster(binDirs: string[], why: string): Promise<Server> {
  const bin = binDirs.find((d) => existsSync(join(d, "initdb")) && existsSync(join(d, "pg_ctl")));
  if (!bin) {
    throw new TestPostgresUnavailable(
      `No PostgreSQL for the tests: SWITCHYARD_TEST_DATABASE_URL is not set, ${why}, and no initdb/pg_ctl in ${binDirs.length > 0 ? binDirs.join(", ") : "/usr/lib/postgresql/*/bin"} to start a throwaway cluster. ${HOW_TO_GET_ONE}`,
    );
  }
  const runAs = unprivileged();
  const dir = mkdtempSync(join(runAs ? "/tmp" : tmpdir(), "switchyard-pg-"));
  if (runAs) chownSync(dir, runAs.uid, runAs.gid);
  chmodSync(dir, 0o700);
  const data = join(dir, "data");
  const pgCtl = join(bin, "pg_ctl");
  const exec = (file: string, args: string[]) => {
    const [cmd, argv] = asUser(runAs, file, args);
    return run(cmd, argv, { cwd: dir, env: { PATH: process.env.PATH ?? "/usr/bin:/bin", LC_ALL: "C" } });
  };
  const fail = (what: string, err: unknown): never => {
    const log = existsSync(join(dir, "log")) ? readFileSync(join(dir, "log"), "utf8").slice(-2000) : "";
    rmSync(dir, { recursive: true, force: true });
    const e = err as { stderr?: string; message?: string };
    throw new TestPostgresUnavailable(`Could not start a throwaway PostgreSQL cluster (${what}): ${e.stderr || e.message}\n${log}\n${HOW_TO_GET_ONE}`);
  };
  try {
    await exec(join(bin, "initdb"), ["-D", data, "-A", "trust", "-U", "postgres", "-E", "UTF8", "--no-locale", "--no-sync"]);
  } catch (err) {
    fail("initdb", err);
  }
  let port = 0;
  for (let attempt = 1; ; attempt++) {
    port = await freePort();
    const settings = `-p ${port} -k ${dir} -c listen_addresses=127.0.0.1 -c fsync=off -c synchronous_commit=off -c full_page_writes=off`;
    try {
      await exec(pgCtl, ["-D", data, "-l", join(dir, "log"), "-w", "-t", "30", "-o", settings, "start"]);
      break;
    } catch (err) {
      if (attempt >= 3) fail("pg_ctl start", err); // the port was taken between the probe and the start
    }
  }
  const watchdog = stopWhenGone(runAs, pgCtl, data, dir);
  return connect(`postgres://postgres@127.0.0.1:${port}/postgres`, "cluster", async () => {
    try {
      await exec(pgCtl, ["-D", data, "-m", "immediate", "-w", "stop"]);
    } finally {
      try {
        if (watchdog.pid) process.kill(watchdog.pid, "SIGKILL");
      } catch {
        // already gone
      }
      rmSync(dir, { recursive: true, force: true });
    }
  }, dir);
}

/**
 * A detached shell that stops the cluster and removes its dir once this process is gone, so a
 * test process killed before its afterAll leaves no postmaster behind.
 */
function stopWhenGone(runAs: RunAs, pgCtl: string, data: string, dir: string) {
  const stop = runAs ? `runuser -u ${runAs.user} -- "${pgCtl}"` : `"${pgCtl}"`;
  const script = `while kill -0 ${process.pid} 2>/dev/null; do sleep 1; done; ${stop} -D "${data}" -m immediate stop >/dev/null 2>&1; rm -rf "${dir}"`;
  const child = spawn("sh", ["-c", script], { detached: true, stdio: "ignore", cwd: "/" });
  child.unref();
  return child;
}
