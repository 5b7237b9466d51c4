import { spawn } from "node:child_process";
import { stat } from "node:fs/promises";
import { z } from "zod";
import { guardedTool } from "./guard";
import { commandEnv } from "./command-env";
import { realpathLoose, relativeInside, resolveWorkspacePath } from "./paths";
import type { ToolContext } from "./tool-context";

/**
 * run_command: `/bin/sh -c <command>`, detached in its own process group, so that a timeout or
 * an abort (stop_run) kills everything it started: SIGTERM to the group, SIGKILL 2 s later.
 * Which commands run without asking is the policy's call (the deny-list first; see policy.ts).
 * A command runs in the run's cwd or a directory below it, with the server's environment scrubbed
 * of every secret (command-env.ts). The output is the reference's: `Ran \`cmd\` in <cwd> (<n>ms).`,
 * a STATUS line, then STDOUT and STDERR (each cut in the middle past a limit).
 */

export const DEFAULT_TIMEOUT_MS = 120_000;
export const MAX_TIMEOUT_MS = 600_000;
/** Bytes kept of each of stdout and stderr. */
export const OUTPUT_LIMIT_BYTES = 30_000;
export const KILL_GRACE_MS = 2_000;
/** After the shell exits, how long to wait for its pipes to drain (a background child may hold them). */
const DRAIN_MS = 200;

const RunCommandInput = z.object({
  command: z.string().min(1).describe("Shell command line, run with /bin/sh -c"),
  cwd: z.string().optional().describe("Working directory, relative to the workspace (default: the workspace); it must be inside the workspace"),
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

export type CommandResult = {
  exitCode: number | null;
  signal: NodeJS.Signals | null;
  timedOut: boolean;
  stdout: string;
  stderr: string;
  stdoutBytes: number;
  stderrBytes: number;
  durationMs: number;
};

function killGroup(pid: number, signal: NodeJS.Signals): void {
  try {
    process.kill(-pid, signal);
  } catch {
    // the group is already gone
  }
}

/** Runs a command line; `env` is the complete environment (see commandEnv). */
export function runShell(command: string, options: { cwd: string; env: NodeJS.ProcessEnv; timeoutMs: number; signal: AbortSignal }): Promise<CommandResult> {
  const started = Date.now();
  const child = spawn("/bin/sh", ["-c", command], { cwd: options.cwd, env: options.env, detached: true, stdio: ["ignore", "pipe", "pipe"] });
  const stdout = new OutputBuffer(OUTPUT_LIMIT_BYTES);
  const stderr = new OutputBuffer(OUTPUT_LIMIT_BYTES);
  child.stdout.on("data", (chunk: Buffer) => stdout.push(chunk));
  child.stderr.on("data", (chunk: Buffer) => stderr.push(chunk));

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
      resolve({
        exitCode: exit?.code ?? null,
        signal: exit?.signal ?? null,
        timedOut,
        stdout: stdout.text(),
        stderr: stderr.text(),
        stdoutBytes: stdout.total,
        stderrBytes: stderr.total,
        durationMs: Date.now() - started,
      });
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

/** The tool's output, in the reference's layout (the lines a model looks for). */
export function formatCommandResult(command: string, cwd: string, result: CommandResult, timeoutMs: number): string {
  const status = result.timedOut
    ? `STATUS: FAILED — timed out after ${timeoutMs}ms; the command and its children were killed`
    : result.exitCode === 0
      ? "STATUS: SUCCESS — exit code 0"
      : result.exitCode === null
        ? `STATUS: FAILED — killed by signal ${result.signal ?? "unknown"} (no exit code: it did not pass)`
        : `STATUS: FAILED — exit code ${result.exitCode}`;
  const parts = [`Ran \`${command}\` in ${cwd} (${result.durationMs}ms).`, status];
  const cut = (name: string, total: number) => (total > OUTPUT_LIMIT_BYTES ? ` (${name} truncated to ${OUTPUT_LIMIT_BYTES} of ${total} bytes)` : "");
  if (result.stdout.length > 0) parts.push(`STDOUT${cut("stdout", result.stdoutBytes)}:\n${result.stdout}`);
  if (result.stderr.length > 0) parts.push(`STDERR${cut("stderr", result.stderrBytes)}:\n${result.stderr}`);
  return parts.join("\n\n");
}

/** The command's directory: the workspace or below it (symlinks resolved), and existing. */
async function commandCwd(ctx: ToolContext, cwd: string | undefined): Promise<string> {
  const dir = resolveWorkspacePath(ctx.cwd, cwd ?? ".");
  const root = realpathLoose(ctx.cwd);
  if (relativeInside(root, dir.real) === undefined) throw new Error(`cwd ${dir.display} is outside the workspace (${ctx.cwd}); commands run in the workspace or below it`);
  const isDir = await stat(dir.abs).then((s) => s.isDirectory(), () => false);
  if (!isDir) throw new Error(`cwd ${dir.display} is not an existing directory`);
  return dir.abs;
}

async function runCommandTool(ctx: ToolContext, input: RunCommandInput, signal: AbortSignal, asked: boolean): Promise<string> {
  const cwd = await commandCwd(ctx, input.cwd);
  const timeoutMs = input.timeoutMs ?? DEFAULT_TIMEOUT_MS;
  const env = commandEnv(process.env, input.env, ctx.isSecret);
  const result = await runShell(input.command, { cwd, env, timeoutMs, signal });
  ctx.onCommand?.({
    command: input.command,
    cwd,
    decision: asked ? "human" : "policy",
    exitCode: result.exitCode,
    signal: result.signal,
    timedOut: result.timedOut,
    durationMs: result.durationMs,
  });
  return formatCommandResult(input.command, cwd, result, timeoutMs);
}

export function runCommandTools(ctx: ToolContext) {
  return {
    run_command: guardedTool(ctx, "run_command", {
      description: `Run a shell command in the workspace (/bin/sh -c), one command per call; pass cwd (a directory of the workspace) instead of cd. Returns the exit status, STDOUT and STDERR (each at most ${OUTPUT_LIMIT_BYTES} bytes). Killed after timeoutMs (default ${DEFAULT_TIMEOUT_MS}). Destructive commands (rm -rf /, mkfs, curl | sh...) are refused.`,
      inputSchema: RunCommandInput,
      access: (input) => [{ operation: "fs.exec", resource: input.command, details: { cwd: resolveWorkspacePath(ctx.cwd, input.cwd ?? ".").abs } }],
      run: (input, signal, asked) => runCommandTool(ctx, input, signal, asked),
    }),
  };
}
