import { spawn, type ChildProcess } from "node:child_process";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { REPO_ROOT } from "../paths";
import { tempHome } from "./server-harness";

/** A `yard worker` process of its own, with its own data dir, as on another machine. */
export type WorkerProc = { name: string; proc: ChildProcess; home: string; output(): string; exited: Promise<number | null> };

/** Starts `yard worker` (bin/yard.mjs) against `url` with `token`; resolves once it is connected as `name`. */
export async function startYardWorker(url: string, token: string, name: string, opts: { capacity?: number; labels?: string[]; env?: Record<string, string> } = {}): Promise<WorkerProc> {
  const home = tempHome(`switchyard-worker-${name}-`);
  const args = [join(REPO_ROOT, "bin", "yard.mjs"), "worker", "--server", url, "--token", token, "--home", home, "--capacity", String(opts.capacity ?? 4)];
  if (opts.labels) args.push("--labels", opts.labels.join(","));
  // a worker's environment: its own, never the server's data dir or token
  const env = { ...process.env, ...opts.env };
  delete env.SWITCHYARD_HOME;
  delete env.SWITCHYARD_TOKEN;
  const proc = spawn(process.execPath, args, { env, stdio: ["ignore", "pipe", "pipe"] });
  let out = "";
  proc.stdout!.on("data", (d: Buffer) => (out = (out + d.toString()).slice(-50_000)));
  proc.stderr!.on("data", (d: Buffer) => (out = (out + d.toString()).slice(-50_000)));
  const exited = new Promise<number | null>((res) => proc.once("exit", (code) => res(code)));
  await new Promise<void>((res, rej) => {
    const timer = setTimeout(() => {
      // not left running behind a failed test: the caller never gets it to stop
      proc.kill("SIGKILL");
      rej(new Error(`worker ${name} did not connect:\n${out}`));
    }, 30_000);
    const check = () => {
      if (out.includes(`as ${name} (epoch`)) {
        clearTimeout(timer);
        res();
      }
    };
    proc.stderr!.on("data", check);
    void exited.then((code) => {
      clearTimeout(timer);
      rej(new Error(`worker ${name} exited with ${code}:\n${out}`));
    });
  });
  return { name, proc, home, output: () => out, exited };
}

/** SIGKILL (when still running) and wait for the exit. */
export async function killYardWorker(w: WorkerProc): Promise<void> {
  if (w.proc.exitCode === null && w.proc.signalCode === null) w.proc.kill("SIGKILL");
  await w.exited;
}

/**
 * The agents' processes a worker started and still listed (worker-sessions.json in its home): a
 * kill -9 of the worker leaves them running (their own process groups), as on a real machine
 * until the worker comes back and is told to stop them. Tests end them here.
 */
export function killWorkerSessions(home: string): void {
  let listed: Array<{ ref: { pid: number } }> = [];
  try {
    listed = JSON.parse(readFileSync(join(home, "worker-sessions.json"), "utf8")) as typeof listed;
  } catch {
    return;
  }
  for (const s of listed) {
    try {
      process.kill(-s.ref.pid, "SIGKILL");
    } catch {
      // gone already
    }
  }
}

/** Polls `fn` every 100 ms until it gives something truthy (that value), or fails naming `what`. */
export async function until<T>(what: string, fn: () => T | undefined | null | false | Promise<T | undefined | null | false>, timeoutMs = 30_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const v = await fn();
    if (v) return v;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}
