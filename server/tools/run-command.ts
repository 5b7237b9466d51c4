import { spawn } from "node:child_process";
import { stat } from "node:fs/promises";
import { z } from "zod";
import { guardedTool } from "./guard";
import { resolveWorkspacePath } from "./paths";
import type { ToolContext } from "./tool-context";

/**
 * run_command: `/bin/sh -c <command>`, detached in its own process group, so that a timeout or
 * an abort (stop_run) kills everything it started: SIGTERM to the group, SIGKILL 2 s later.
 * Output is the exit status and the combined stdout/stderr, cut in the middle past a limit.
 */

export const DEFAULT_TIMEOUT_MS = 120_000;
export const MAX_TIMEOUT_MS = 600_000;
export const OUTPUT_LIMIT_BYTES = 30_000;
export const KILL_GRACE_MS = 2_000;
/** After the shell exits, how long to wait for its pipes to drain (a background child may hold them). */
const DRAIN_MS = 200;
/** Never handed to commands an agent runs. */
const HIDDEN_ENV = ["SWITCHYARD_TOKEN"];

const RunCommandInput = z.object({
  command: z.string().min(1).describe("Shell command line, run with /bin/sh -c"),
  cwd: z.string().optional().describe("Working directory, relative to the workspace (default: the workspace)"),
  timeoutMs: z.number().int().min(1).max(MAX_TIMEOUT_MS).optional().describe(`Kill the command after this long (default ${DEFAULT_TIMEOUT_MS})`),
  env: z.record(z.string(), z.string()).optional().describe("Extra environment variables"),
});
type RunCommandInput = z.infer<typeof RunCommandInput>;

/** Keeps the first and last half of the limit; counts everything. */
class OutputBuffer {
  private head = Buffer.alloc(0);
  private tail: Buffer[] = [];
  private tailBytes = 0;
  total = 0;

  constructor(private readonly limit: number) {}

  push(chunk: Buffer): void {
    this.total += chunk.length;
    const half = Math.floor(this.limit / 2);
    if (this.head.length < half) {
      const take = chunk.subarray(0, half - this.head.length);
      this.head = Buffer.concat([this.head, take]);
      chunk = chunk.subarray(take.length);
    }
    if (chunk.length === 0) return;
    this.tail.push(chunk);
    this.tailBytes += chunk.length;
    while (this.tail.length > 1 && this.tailBytes - (this.tail[0]?.length ?? 0) >= half) this.tailBytes -= this.tail.shift()?.length ?? 0;
  }

  text(): string {
    const tail = Buffer.concat(this.tail);
    if (this.total <= this.limit) return Buffer.concat([this.head, tail]).toString("utf8");
    const keep = tail.subarray(Math.max(0, tail.length - Math.floor(this.limit / 2)));
    const omitted = this.total - this.head.length - keep.length;
    return `${this.head.toString("utf8")}\n[... ${omitted} bytes of output omitted ...]\n${keep.toString("utf8")}`;
  }
}

export type CommandResult = { exitCode: number | null; signal: NodeJS.Signals | null; timedOut: boolean; output: string; totalBytes: number; durationMs: number };

function killGroup(pid: number, signal: NodeJS.Signals): void {
  try {
    process.kill(-pid, signal);
  } catch {
    // the group is already gone
  }
}

export function runShell(command: string, options: { cwd: string; env?: Record<string, string>; timeoutMs: number; signal: AbortSignal }): Promise<CommandResult> {
  const env: NodeJS.ProcessEnv = { ...process.env, ...options.env };
  for (const name of HIDDEN_ENV) delete env[name];
  const started = Date.now();
  const child = spawn("/bin/sh", ["-c", command], { cwd: options.cwd, env, detached: true, stdio: ["ignore", "pipe", "pipe"] });
  const output = new OutputBuffer(OUTPUT_LIMIT_BYTES);
  child.stdout.on("data", (chunk: Buffer) => output.push(chunk));
  child.stderr.on("data", (chunk: Buffer) => output.push(chunk));

  return new Promise((resolve, reject) => {
    let timedOut = false;
    let exit: { code: number | null; signal: NodeJS.Signals | null } | undefined;
    let settled = false;
    const terminate = () => {
      if (child.pid === undefined) return;
      const pid = child.pid;
      killGroup(pid, "SIGTERM");
      setTimeout(() => killGroup(pid, "SIGKILL"), KILL_GRACE_MS).unref();
    };
    const timer = setTimeout(() => {
      timedOut = true;
      terminate();
    }, options.timeoutMs);
    const onAbort = () => terminate();
    options.signal.addEventListener("abort", onAbort, { once: true });

    const finish = (error?: Error) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      options.signal.removeEventListener("abort", onAbort);
      child.stdout.destroy();
      child.stderr.destroy();
      if (error) return reject(error);
      if (options.signal.aborted) return reject(options.signal.reason ?? new DOMException("This operation was aborted", "AbortError"));
      resolve({ exitCode: exit?.code ?? null, signal: exit?.signal ?? null, timedOut, output: output.text(), totalBytes: output.total, durationMs: Date.now() - started });
    };
    child.on("error", (err) => finish(new Error(`Could not start /bin/sh: ${err.message}`)));
    child.on("exit", (code, signal) => {
      exit = { code, signal };
      setTimeout(() => finish(), DRAIN_MS).unref();
    });
    child.on("close", () => finish());
    if (options.signal.aborted) terminate();
  });
}

export function formatCommandResult(command: string, result: CommandResult, timeoutMs: number): string {
  const seconds = (result.durationMs / 1000).toFixed(1);
  const status = result.timedOut
    ? `timed out after ${timeoutMs} ms; the command and its children were killed`
    : result.signal
      ? `killed by ${result.signal}`
      : `exit code ${result.exitCode}`;
  const cut = result.totalBytes > OUTPUT_LIMIT_BYTES ? `; output truncated to ${OUTPUT_LIMIT_BYTES} of ${result.totalBytes} bytes` : "";
  const body = result.output.length > 0 ? result.output.replace(/\n$/, "") : "(no output)";
  return `$ ${command}\n${status} (${seconds} s${cut})\n\n${body}`;
}

async function runCommandTool(ctx: ToolContext, input: RunCommandInput, signal: AbortSignal): Promise<string> {
  const dir = resolveWorkspacePath(ctx.cwd, input.cwd ?? ".");
  const isDir = await stat(dir.abs).then((s) => s.isDirectory(), () => false);
  if (!isDir) throw new Error(`cwd ${dir.display} is not an existing directory`);
  const timeoutMs = input.timeoutMs ?? DEFAULT_TIMEOUT_MS;
  const result = await runShell(input.command, { cwd: dir.abs, env: input.env, timeoutMs, signal });
  return formatCommandResult(input.command, result, timeoutMs);
}

export function runCommandTools(ctx: ToolContext) {
  return {
    run_command: guardedTool(ctx, "run_command", {
      description: `Run a shell command in the workspace (/bin/sh -c). Returns the exit code and the combined stdout/stderr (at most ${OUTPUT_LIMIT_BYTES} bytes). Killed after timeoutMs (default ${DEFAULT_TIMEOUT_MS}).`,
      inputSchema: RunCommandInput,
      access: (input) => [
        { operation: "fs.exec", resource: input.command, details: { cwd: resolveWorkspacePath(ctx.cwd, input.cwd ?? ".").abs } },
      ],
      run: (input, signal) => runCommandTool(ctx, input, signal),
    }),
  };
}
