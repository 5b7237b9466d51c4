import { spawn } from "node:child_process";
import { existsSync, readFileSync, statSync } from "node:fs";
import { join } from "node:path";
import { ensureYardShim } from "../agents/agent-env";
import { REPO_ROOT } from "../paths";
import { removeHome, tempHome } from "../testing/server-harness";
import { startBenchServer, type BenchServer } from "./bench-server";
import { measured, waitIdle } from "./load";
import { fmt, median, type BenchRow } from "./table";

/**
 * The `yard` command as an agent runs it: the shim the server puts on agents' PATH
 * (`<home>/bin/yard`, this Node running bin/yard.mjs) with an agent's environment
 * (SWITCHYARD_URL), `yard health` against a running server, wall time from spawn to exit, median
 * of `times`. For scale: a bare `node -e 0` on this machine, interleaved with it. Counted: the
 * runs that exited 0 and printed the server's health.
 */

function run(command: string, args: string[], env: NodeJS.ProcessEnv): Promise<{ ms: number; code: number | null; out: string }> {
  return new Promise((resolve, reject) => {
    const started = performance.now();
    const child = spawn(command, args, { env, stdio: ["ignore", "pipe", "pipe"] });
    let out = "";
    child.stdout.on("data", (d: Buffer) => (out += d.toString()));
    child.stderr.on("data", (d: Buffer) => (out += d.toString()));
    child.on("error", reject);
    child.on("exit", (code) => resolve({ ms: performance.now() - started, code, out }));
  });
}

/** Which code the shim runs: bin/yard.mjs runs dist/yard.mjs when none of the sources it was built from (dist/yard.inputs.json) is newer, else the sources through tsx. */
function cliPath(): string {
  const bundle = join(REPO_ROOT, "dist", "yard.mjs");
  const list = join(REPO_ROOT, "dist", "yard.inputs.json");
  if (!existsSync(bundle) || !existsSync(list)) return "the sources through tsx (no dist/yard.mjs, or no list of its sources)";
  const built = statSync(bundle).mtimeMs;
  const inputs = [...(JSON.parse(readFileSync(list, "utf8")) as string[]), "package.json"];
  const fresh = inputs.every((p) => (statSync(join(REPO_ROOT, p), { throwIfNoEntry: false })?.mtimeMs ?? Infinity) <= built);
  return fresh ? "the bundle dist/yard.mjs" : "the sources through tsx (dist/yard.mjs is older than them)";
}

/** Builds the CLI bundle (dist/yard.mjs) when it is stale, so bin/yard.mjs runs it, as `yard start --build-if-needed` does; returns which code it runs. */
export async function ensureCliBundle(env: NodeJS.ProcessEnv = process.env): Promise<string> {
  if (cliPath().startsWith("the bundle")) return cliPath();
  const built = await run(process.execPath, [join(REPO_ROOT, "scripts", "build.mjs"), "cli"], env);
  if (built.code !== 0) throw new Error(`building the CLI bundle failed:\n${built.out}`);
  return cliPath();
}

/** `build`: build the CLI bundle first when it is stale (not in --quick, which runs beside the test suite's servers). */
export async function benchYardCommand(options: { times?: number; build?: boolean } = {}): Promise<BenchRow[]> {
  const times = options.times ?? 20;
  const home = tempHome("switchyard-bench-");
  let server: BenchServer | undefined;
  try {
    server = await startBenchServer({ home });
    const shim = join(ensureYardShim(home), "yard");
    const env: NodeJS.ProcessEnv = { ...process.env, PATH: `${join(home, "bin")}:${process.env.PATH ?? ""}`, SWITCHYARD_URL: server.url, NODE_ENV: "production" };
    delete env.NODE_OPTIONS;
    // agents of a server started as the README says (`npm start`, `yard start --build-if-needed`)
    // run the bundle: build it as that does when it is stale, so the row measures what they run
    if (options.build ?? true) await ensureCliBundle(env);
    // bin/yard.mjs stats the bundle's sources on every start to tell whether it is fresh
    const walk = performance.now();
    const path = cliPath();
    const walkMs = performance.now() - walk;
    const yard: number[] = [];
    const node: number[] = [];
    let ok = 0;
    for (let i = 0; i < times; i++) {
      await waitIdle(server.pid, 5_000);
      const r = await measured(() => run(shim, ["health"], env));
      yard.push(r.ms);
      if (r.code === 0 && r.out.includes(server.url)) ok++;
      node.push((await measured(() => run(process.execPath, ["-e", "0"], env))).ms);
    }
    const ms = median(yard);
    return [
      {
        bench: "yard command",
        metric: `\`yard health\` through the agents' shim against a running server, wall time (median of ${times})`,
        value: `${fmt.ms(ms)} (bare \`node -e 0\` ${fmt.ms(median(node))}; the freshness check ${fmt.ms(walkMs)}; ran ${path})`,
        goal: "< 150 ms",
        met: ms < 150,
        count: { sent: times, arrived: ok, unit: "healthy answers" },
      },
    ];
  } finally {
    await server?.stop();
    removeHome(home);
  }
}
