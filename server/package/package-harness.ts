import { spawn, type ChildProcess } from "node:child_process";
import { existsSync, readFileSync } from "node:fs";
import { createServer } from "node:net";
import { join, relative } from "node:path";
import { fileURLToPath } from "node:url";

/** Test support for the package tests: commands, a free port, a server child, the module log. */

export const RECORD_MODULES = join(import.meta.dirname, "fixtures", "record-modules.mjs");

/** Packages a client command must not load: the server, the database, the model SDK, MCP. */
export const SERVER_PACKAGES = ["fastify", "better-sqlite3", "drizzle-orm", "ai", "@modelcontextprotocol/sdk"];

export type Ran = { code: number | null; stdout: string; stderr: string };

/** Run a command to its end (no shell); never throws on a non-zero exit. */
export function run(cmd: string, args: string[], opts: { cwd?: string; env?: NodeJS.ProcessEnv; timeoutMs?: number } = {}): Promise<Ran> {
  return new Promise((resolve, reject) => {
    const child = spawn(cmd, args, { cwd: opts.cwd, env: opts.env ?? process.env, stdio: ["ignore", "pipe", "pipe"] });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (d: Buffer) => (stdout += d.toString()));
    child.stderr.on("data", (d: Buffer) => (stderr += d.toString()));
    const timer = setTimeout(() => child.kill("SIGKILL"), opts.timeoutMs ?? 60_000);
    child.on("error", reject);
    child.on("close", (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    });
  });
}

export async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const address = server.address();
  const port = typeof address === "object" && address ? address.port : 0;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

/** The environment without npm's own `npm_*` variables (set when the tests run under `npm run`). */
export function cleanEnv(extra: Record<string, string> = {}): NodeJS.ProcessEnv {
  const env = Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.toLowerCase().startsWith("npm_")));
  for (const k of ["NODE_OPTIONS", "SWITCHYARD_URL", "SWITCHYARD_TOKEN", "SWITCHYARD_PORT", "SWITCHYARD_HOME", "SWITCHYARD_CONFIG", "SWITCHYARD_FROM_SOURCE"]) delete env[k];
  return { ...env, ...extra };
}

/** Environment that records every module the process resolves into `log`. */
export function recordingEnv(log: string, env: NodeJS.ProcessEnv): NodeJS.ProcessEnv {
  return { ...env, MODULE_LOG: log, NODE_OPTIONS: `--import ${RECORD_MODULES}` };
}

/** The module URLs a recorded process resolved. */
export function loadedModules(log: string): string[] {
  return existsSync(log) ? readFileSync(log, "utf8").split("\n").filter(Boolean) : [];
}

/**
 * The sources (paths relative to `root`, as esbuild's metafile names them: `server/cli/io.ts`,
 * `node_modules/commander/index.js`) held by the bundle files among the loaded modules: what a
 * command of the built CLI ran, module by module, although the bundle joins them into chunks.
 */
export function bundledSources(metafile: string, root: string, modules: string[]): string[] {
  const { outputs } = JSON.parse(readFileSync(metafile, "utf8")) as { outputs: Record<string, { inputs: Record<string, unknown> }> };
  const loaded = new Set(modules.filter((url) => url.startsWith("file:")).map((url) => relative(root, fileURLToPath(url))));
  const sources = Object.entries(outputs).flatMap(([file, output]) => (loaded.has(file) ? Object.keys(output.inputs) : []));
  return [...new Set(sources)].sort();
}

/** Which of `packages` appear among the loaded modules (as a node_modules/<name>/ path). */
export function loadedPackages(modules: string[], packages: string[]): string[] {
  return packages.filter((name) => modules.some((url) => url.includes(`/node_modules/${name}/`)));
}

export type Started = { proc: ChildProcess; url: string; output: () => string; stop: () => Promise<void> };

/**
 * Spawn a `yard start` (any command line) and wait for its "Dashboard:" line. `group`: the command
 * starts the server as a grandchild (npx: npm, then a shell), so it runs in a process group of its
 * own and `stop` signals the whole group.
 */
export async function startYard(
  cmd: string,
  args: string[],
  env: NodeJS.ProcessEnv,
  timeoutMs = 60_000,
  opts: { cwd?: string; group?: boolean } = {},
): Promise<Started> {
  const proc = spawn(cmd, args, { env, cwd: opts.cwd, stdio: ["ignore", "pipe", "pipe"], detached: opts.group === true });
  const signal = (sig: NodeJS.Signals) => {
    if (opts.group && proc.pid !== undefined) {
      try {
        process.kill(-proc.pid, sig);
      } catch {
        // the group is gone already
      }
      return;
    }
    proc.kill(sig);
  };
  /** The command (with group: any process of its group) is still running. */
  const running = (): boolean => {
    if (!opts.group || proc.pid === undefined) return proc.exitCode === null && proc.signalCode === null;
    try {
      process.kill(-proc.pid, 0);
      return true;
    } catch {
      return false;
    }
  };
  let out = "";
  const exited = new Promise<void>((resolve) => proc.on("exit", () => resolve()));
  const url = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`yard start did not come up in ${timeoutMs} ms:\n${out}`)), timeoutMs);
    const onData = (d: Buffer) => {
      out += d.toString();
      const m = /Dashboard:\s+(http:\/\/\S+?)\/?\s/.exec(out);
      if (!m?.[1]) return;
      clearTimeout(timer);
      resolve(m[1]);
    };
    proc.stdout?.on("data", onData);
    proc.stderr?.on("data", onData);
    proc.on("exit", (code) => {
      clearTimeout(timer);
      reject(new Error(`yard start exited (${code}):\n${out}`));
    });
  }).catch((err: unknown) => {
    signal("SIGKILL");
    throw err;
  });
  const stop = async () => {
    if (!running()) return;
    signal("SIGTERM");
    const timer = setTimeout(() => signal("SIGKILL"), 10_000);
    await exited;
    // npm can exit before the server it started has finished stopping
    while (running()) await new Promise((resolve) => setTimeout(resolve, 100));
    clearTimeout(timer);
  };
  return { proc, url, output: () => out, stop };
}
