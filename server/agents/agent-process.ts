import { spawn } from "node:child_process";
import { closeSync, openSync, readFileSync } from "node:fs";

/**
 * Detached agent processes: stdin ignored (an open stdin makes claude wait ~3 s and codex
 * forever), stdout and stderr straight into files, a tiny `sh` wrapper that records the exit code
 * in a file, its own process group. The process outlives the server; after a restart it is found
 * again by PID plus start time (a PID alone may have been reused).
 */

export interface SpawnedProcess {
  pid: number;
  /** The start time of the process (from /proc), or null where /proc is absent. */
  startTime: string | null;
  /** Resolves with the exit code once the process (group leader) exits; only while we are its parent. */
  exited: Promise<number | null>;
}

export interface DetachedSpawn {
  command: string;
  args: string[];
  cwd: string;
  env: NodeJS.ProcessEnv;
  stdoutPath: string;
  stderrPath: string;
  exitCodePath: string;
}

const WRAPPER = '"$@"; code=$?; printf "%s" "$code" > "$SWITCHYARD_EXIT_FILE"; exit $code';

export function spawnDetached(opts: DetachedSpawn): SpawnedProcess {
  const out = openSync(opts.stdoutPath, "a");
  const err = openSync(opts.stderrPath, "a");
  try {
    const child = spawn("/bin/sh", ["-c", WRAPPER, "sh", opts.command, ...opts.args], {
      cwd: opts.cwd,
      env: { ...opts.env, SWITCHYARD_EXIT_FILE: opts.exitCodePath },
      detached: true,
      stdio: ["ignore", out, err],
    });
    const exited = new Promise<number | null>((resolve) => {
      child.once("error", () => resolve(null));
      child.once("exit", (code, signal) => resolve(code ?? (signal ? 128 + signalNumber(signal) : null)));
    });
    if (child.pid === undefined) throw new Error(`could not start ${opts.command}`);
    child.unref();
    return { pid: child.pid, startTime: processStartTime(child.pid), exited };
  } finally {
    closeSync(out);
    closeSync(err);
  }
}

function signalNumber(signal: NodeJS.Signals): number {
  return { SIGHUP: 1, SIGINT: 2, SIGKILL: 9, SIGTERM: 15 }[signal as string] ?? 0;
}

/** Field 22 of /proc/<pid>/stat: the start time in clock ticks since boot. */
export function processStartTime(pid: number): string | null {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    return fields[19] ?? null;
  } catch {
    return null;
  }
}

/** True when the process is alive (and, when known, is the same process that we started). */
export function isAlive(pid: number, startTime: string | null): boolean {
  try {
    process.kill(pid, 0);
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === "EPERM";
  }
  if (startTime === null) return true;
  const now = processStartTime(pid);
  if (now === null) return true;
  if (now !== startTime) return false;
  try {
    // a zombie (exited, not yet reaped) is not alive
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    return stat.slice(stat.lastIndexOf(")") + 2, stat.lastIndexOf(")") + 3) !== "Z";
  } catch {
    return false;
  }
}

/** SIGTERM to the whole group, SIGKILL after `graceMs` if anything of it is still alive. */
export async function killGroup(pid: number, startTime: string | null, graceMs = 3000): Promise<void> {
  const signalGroup = (sig: NodeJS.Signals) => {
    try {
      process.kill(-pid, sig);
    } catch {
      try {
        process.kill(pid, sig);
      } catch {
        /* already gone */
      }
    }
  };
  if (!isAlive(pid, startTime)) return; // gone, or the PID now belongs to someone else
  signalGroup("SIGTERM");
  const deadline = Date.now() + graceMs;
  while (Date.now() < deadline) {
    await new Promise((r) => setTimeout(r, 50));
    if (!isAlive(pid, startTime)) break;
  }
  signalGroup("SIGKILL");
}

/** The exit code the wrapper recorded, or null (killed by a signal, or still running). */
export function readExitCode(path: string): number | null {
  try {
    const text = readFileSync(path, "utf8").trim();
    return text === "" ? null : Number(text);
  } catch {
    return null;
  }
}
