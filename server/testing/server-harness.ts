import { spawn, type ChildProcess } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { createServer, type SwitchyardServer } from "../app";
import { createSwitchyardClient, type SwitchyardClient } from "../client";
import { loadConfig, type ENV_VARS } from "../config";
import postgres from "postgres";
import { createTestDatabase, type TestDatabase } from "./postgres";

/** Test support: the real server, in-process or as a child process, on a random loopback port. */

const repoRoot = resolve(import.meta.dirname, "..", "..");

/**
 * `SWITCHYARD_TEST_STORE=postgres` (the integration-pg project): every server the tests start runs
 * on PostgreSQL, one database per data dir (a restart on the same home finds its data again),
 * dropped with the home (removeHome). Unset: the SQLite file in the data dir.
 */
export const TEST_STORE: "sqlite" | "postgres" = process.env.SWITCHYARD_TEST_STORE === "postgres" ? "postgres" : "sqlite";
const TEST_SECRET_KEY = "switchyard-test-cluster-secret-key-0123456789";
const databases = new Map<string, Promise<TestDatabase>>();

/** The env that puts a server on this home's store (nothing on SQLite, or when the test chose a database itself). */
export async function storeEnv(home: string, env: Record<string, string | undefined> = {}): Promise<Record<string, string>> {
  if (TEST_STORE !== "postgres" || env.SWITCHYARD_DATABASE_URL !== undefined) return {};
  let db = databases.get(home);
  if (!db) {
    db = createTestDatabase();
    databases.set(home, db);
  }
  return { SWITCHYARD_DATABASE_URL: (await db).url, SWITCHYARD_SECRET_KEY: env.SWITCHYARD_SECRET_KEY ?? TEST_SECRET_KEY };
}

/**
 * Everything the store of this home holds, as text (secrets must not be in it): on PostgreSQL
 * every row of every table; on SQLite "" (the file is in the home: read it with the home's files).
 */
export async function storeContents(home: string): Promise<string> {
  const db = databases.get(home);
  if (!db) return "";
  const sql = postgres((await db).url, { max: 1, onnotice: () => {} });
  try {
    const tables = await sql<Array<{ name: string }>>`SELECT tablename AS name FROM pg_tables WHERE schemaname IN ('public', 'drizzle')`;
    const parts: string[] = [];
    for (const { name } of tables) {
      const rows = await sql.unsafe(`SELECT t::text AS row FROM "${name}" t`).catch(() => sql.unsafe(`SELECT t::text AS row FROM drizzle."${name}" t`));
      for (const r of rows as unknown as Array<{ row: string }>) parts.push(String(r.row));
    }
    return parts.join("\n");
  } finally {
    await sql.end({ timeout: 5 });
  }
}

export function tempHome(prefix = "switchyard-test-"): string {
  return mkdtempSync(join(tmpdir(), prefix));
}

export type TestServer = {
  server: SwitchyardServer;
  url: string;
  port: number;
  home: string;
  client: SwitchyardClient;
  /** Every log line written so far. */
  logs: string[];
  stop(): Promise<void>;
};

export async function startTestServer(
  options: { home?: string; env?: Record<string, string>; overrides?: Partial<Record<keyof typeof ENV_VARS, unknown>>; agentHost?: "local" | "loopback" } = {},
): Promise<TestServer> {
  const home = options.home ?? tempHome();
  const config = loadConfig({ SWITCHYARD_HOME: home, SWITCHYARD_PORT: "0", SWITCHYARD_LOG_LEVEL: "warn", ...(await storeEnv(home, options.env)), ...options.env }, options.overrides);
  const logs: string[] = [];
  const server = await createServer({ config, logStream: { write: (line: string) => logs.push(line) }, ...(options.agentHost ? { agentHost: options.agentHost } : {}) });
  const { url, port } = await server.start();
  const client = createSwitchyardClient({ url, token: config.token });
  return { server, url, port, home, client, logs, stop: () => server.stop("test") };
}

export type ServerProcess = {
  proc: ChildProcess;
  url: string;
  port: number;
  home: string;
  output: () => string;
  /** Send a signal and wait for the exit. */
  kill(signal?: NodeJS.Signals): Promise<number | null>;
};

/** Start `yard start` as a child process; resolves once it prints its dashboard URL. */
export async function spawnServer(options: { home: string; port?: number; env?: Record<string, string>; timeoutMs?: number; build?: boolean }): Promise<ServerProcess> {
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    SWITCHYARD_HOME: options.home,
    SWITCHYARD_PORT: String(options.port ?? 0),
    SWITCHYARD_LOG_LEVEL: "info",
    ...(await storeEnv(options.home, options.env)),
    ...options.env,
  };
  const args = [join(repoRoot, "bin", "yard.mjs"), "start", ...(options.build ? ["--build-if-needed"] : [])];
  const proc = spawn(process.execPath, args, { env, stdio: ["ignore", "pipe", "pipe"] });
  let out = "";
  proc.stdout!.on("data", (d: Buffer) => (out += d.toString()));
  proc.stderr!.on("data", (d: Buffer) => (out += d.toString()));
  const exited = new Promise<number | null>((res) => proc.once("exit", (code) => res(code)));
  const url = await new Promise<string>((res, rej) => {
    const timer = setTimeout(() => rej(new Error(`server did not start in time:\n${out}`)), options.timeoutMs ?? 30_000);
    const check = () => {
      const m = /Dashboard: (http:\/\/[^\s/]+)/.exec(out);
      if (m) {
        clearTimeout(timer);
        res(m[1]!);
      }
    };
    proc.stdout!.on("data", check);
    void exited.then((code) => {
      clearTimeout(timer);
      rej(new Error(`server exited with ${code} before starting:\n${out}`));
    });
  });
  const port = Number(new URL(url).port);
  return {
    proc,
    url,
    port,
    home: options.home,
    output: () => out,
    async kill(signal = "SIGTERM") {
      if (proc.exitCode === null && proc.signalCode === null) proc.kill(signal);
      return exited;
    },
  };
}

export function removeHome(home: string): void {
  rmSync(home, { recursive: true, force: true });
  const db = databases.get(home);
  databases.delete(home);
  void db?.then((d) => d.drop()).catch(() => {});
}
