import { spawn, spawnSync, type ChildProcess } from "node:child_process";
import { existsSync, readdirSync, readFileSync, rmSync, statSync } from "node:fs";
import { basename, join } from "node:path";
import { createInterface } from "node:readline";
import { REPO_ROOT } from "../paths";

/**
 * The server the benches measure: `server/main.ts` in production mode, bundled by esbuild with the
 * options `yard start` bundles the CLI with (one plain Node process), in a child process of its
 * own, so its CPU and memory are its own. Started without the CLI around it, so a CLI being
 * reworked does not change what the server rows measure (the `yard` command has its own row).
 */

const built = new Map<string, Promise<string[]>>();
/** This run's bundles: its own folder (two bench runs at once do not overwrite each other's), removed at exit. */
const BUNDLES = join(REPO_ROOT, "dist", "bench", `run-${process.pid}`);
process.once("exit", () => rmSync(BUNDLES, { recursive: true, force: true }));

/** Bundle folders of bench runs that ended without removing theirs (a killed test worker). */
function sweepBundles(): void {
  const dir = join(REPO_ROOT, "dist", "bench");
  if (!existsSync(dir)) return;
  for (const name of readdirSync(dir)) {
    const pid = Number(/^run-(\d+)$/.exec(name)?.[1]);
    if (!pid || pid === process.pid) continue;
    try {
      process.kill(pid, 0);
    } catch {
      rmSync(join(dir, name), { recursive: true, force: true });
    }
  }
}

/**
 * The node arguments that run `entry` as production runs the server: bundled once per bench run
 * into dist/bench/run-<pid>/, or the sources through tsx when it cannot be bundled.
 */
function bundled(entry: string): Promise<string[]> {
  let args = built.get(entry);
  if (!args) {
    const out = join(BUNDLES, `${basename(entry, ".ts")}.mjs`);
    args = (async () => {
      sweepBundles();
      try {
        const { build } = await import("esbuild");
        await build({ entryPoints: [entry], bundle: true, platform: "node", format: "esm", packages: "external", target: "node20", outfile: out, logLevel: "error" });
        return [out];
      } catch (err) {
        process.stderr.write(`bench: could not bundle ${entry} (${(err as Error).message.split("\n")[0]}); running the sources through tsx\n`);
        return ["--import", "tsx", entry];
      }
    })();
    built.set(entry, args);
  }
  return args;
}

export type BenchServer = {
  proc: ChildProcess;
  pid: number;
  url: string;
  home: string;
  output: () => string;
  /** SIGTERM and wait for the exit. */
  stop(): Promise<void>;
};

export async function startBenchServer(options: { home: string; env?: Record<string, string>; timeoutMs?: number }): Promise<BenchServer> {
  const args = await bundled(join(import.meta.dirname, "server-entry.ts"));
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    NODE_ENV: "production",
    SWITCHYARD_HOME: options.home,
    SWITCHYARD_PORT: "0",
    SWITCHYARD_LOG_LEVEL: "warn",
    ...options.env,
  };
  const proc = spawn(process.execPath, args, { env, stdio: ["ignore", "pipe", "pipe"] });
  let out = "";
  proc.stdout!.on("data", (d: Buffer) => (out += d.toString()));
  proc.stderr!.on("data", (d: Buffer) => (out = (out + d.toString()).slice(-20_000)));
  const exited = new Promise<void>((resolve) => proc.once("exit", () => resolve()));
  const url = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`the server did not start in time:\n${out}`)), options.timeoutMs ?? 60_000);
    const check = () => {
      const m = /Dashboard: (http:\/\/[^\s/]+)/.exec(out);
      if (!m) return;
      clearTimeout(timer);
      resolve(m[1]!);
    };
    proc.stdout!.on("data", check);
    void exited.then(() => {
      clearTimeout(timer);
      reject(new Error(`the server exited before it started:\n${out}`));
    });
  });
  return {
    proc,
    pid: proc.pid!,
    url,
    home: options.home,
    output: () => out,
    async stop() {
      if (proc.exitCode === null && proc.signalCode === null) proc.kill("SIGTERM");
      await exited;
    },
  };
}

/**
 * A helper process of the bench (a bare limit, a subscriber, a server measured from inside):
 * `node --import tsx <file> args`, or its bundle (`bundle`: what is measured runs as production
 * runs it), talking JSON lines on stdio; `env` is added to this process's environment.
 */
export type Helper = {
  proc: ChildProcess;
  pid: number;
  /** The next JSON line it prints. */
  next<T>(): Promise<T>;
  send(message: unknown): void;
  stop(): Promise<void>;
};

export async function startHelper(file: string, args: string[] = [], options: { bundle?: boolean; env?: Record<string, string> } = {}): Promise<Helper> {
  const run = options.bundle ? await bundled(file) : ["--import", "tsx", file];
  const proc = spawn(process.execPath, [...run, ...args], { stdio: ["pipe", "pipe", "inherit"], env: { ...process.env, ...options.env, NODE_ENV: "production" } });
  const lines = createInterface({ input: proc.stdout! })[Symbol.asyncIterator]();
  const exited = new Promise<void>((resolve) => proc.once("exit", () => resolve()));
  return {
    proc,
    pid: proc.pid!,
    async next<T>() {
      const line = await lines.next();
      if (line.done) throw new Error(`${file} ended without an answer`);
      return JSON.parse(line.value) as T;
    },
    send: (message) => proc.stdin!.write(`${JSON.stringify(message)}\n`),
    async stop() {
      if (proc.exitCode === null && proc.signalCode === null) proc.kill("SIGTERM");
      await exited;
    },
  };
}

/** Peak resident memory of a process so far (VmHWM), in bytes. */
export function peakRss(pid: number): number {
  const m = /VmHWM:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, "utf8"));
  return m ? Number(m[1]) * 1024 : 0;
}

function newest(dir: string): number {
  let t = 0;
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const p = join(dir, entry.name);
    t = Math.max(t, entry.isDirectory() ? newest(p) : statSync(p).mtimeMs);
  }
  return t;
}

/**
 * The dashboard's production build, for the browser rows: built into dist/bench/web when missing
 * or older than web/ (never over dist/web, which other runs may be serving); in a quick run an
 * existing build (dist/bench/web, else dist/web) is used as it is. Returns its directory.
 */
export function dashboardBuild(quick: boolean): string {
  const own = join(REPO_ROOT, "dist", "bench", "web");
  const shared = join(REPO_ROOT, "dist", "web");
  const built = (dir: string) => existsSync(join(dir, "index.html"));
  if (quick && built(own)) return own;
  if (quick && built(shared)) return shared;
  const sources = Math.max(newest(join(REPO_ROOT, "web")), statSync(join(REPO_ROOT, "vite.config.ts")).mtimeMs);
  if (built(own) && statSync(join(own, "index.html")).mtimeMs >= sources) return own;
  process.stderr.write("bench: building the dashboard (production) into dist/bench/web...\n");
  const vite = join(REPO_ROOT, "node_modules", "vite", "bin", "vite.js");
  const r = spawnSync(process.execPath, [vite, "build", "--logLevel", "warn", "--outDir", own, "--emptyOutDir"], { cwd: REPO_ROOT, stdio: ["ignore", "inherit", "inherit"] });
  if (r.status !== 0) throw new Error("building the dashboard failed (see above)");
  return own;
}
