import { execFile } from "node:child_process";

/** Run git without a shell, stdin ignored; resolves with stdout, rejects with git's own message. */
export function git(args: string[], opts: RunOptions): Promise<string> {
  return run("git", args, opts, `git ${args[0]}`);
}

interface RunOptions {
  cwd: string;
  env?: NodeJS.ProcessEnv;
  maxBuffer?: number;
  /** Written to stdin (closed right after); without it stdin is closed at once. */
  input?: string;
  /** Killed past this (a remote that never answers); the error says it timed out. */
  timeoutMs?: number;
}

/** `file args` with stdin closed (after `input`): stdout, or an error carrying stderr and the exit code. */
function run(file: string, args: string[], opts: RunOptions, label: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const child = execFile(file, args, { cwd: opts.cwd, env: opts.env ?? process.env, maxBuffer: opts.maxBuffer ?? 64 * 1024 * 1024, ...(opts.timeoutMs ? { timeout: opts.timeoutMs } : {}) }, (err, stdout, stderr) => {
      if (err) {
        const timedOut = opts.timeoutMs !== undefined && err.killed && err.signal === "SIGTERM";
        const msg = timedOut ? `no answer within ${Math.round(opts.timeoutMs! / 1000)} s (stopped)` : (stderr || err.message).toString().trim();
        reject(Object.assign(new Error(`${label} failed: ${msg}`), { stderr: msg, exitCode: (err as { code?: number }).code }));
        return;
      }
      resolve(stdout.toString());
    });
    child.stdin?.end(opts.input);
  });
}

/**
 * Several git commands in one child process, run one after the other: their outputs, in order.
 * A fork of this (large) process costs more than the git commands themselves, so reads that go
 * together share one. Arguments travel as positional parameters, never inside the script.
 * Rejects with the first failing command's error; outputs must not contain NUL bytes.
 */
export async function gitMany(commands: string[][], opts: { cwd: string }): Promise<string[]> {
  const script = ["set -e"];
  const params: string[] = [];
  commands.forEach((args, i) => {
    const refs = args.map((arg) => {
      params.push(arg);
      return `"\${${params.length}}"`;
    });
    script.push(`git ${refs.join(" ")}`);
    if (i < commands.length - 1) script.push("printf '\\0'");
  });
  const parts = (await run("sh", ["-c", script.join("\n"), "sh", ...params], opts, "git")).split("\0");
  if (parts.length !== commands.length) throw new Error(`git: expected ${commands.length} outputs, got ${parts.length}`);
  return parts;
}

/** The top level of the repository containing `dir`, or null when it is not in one. */
export async function repoRootOf(dir: string): Promise<string | null> {
  try {
    return (await git(["rev-parse", "--show-toplevel"], { cwd: dir })).trim();
  } catch {
    return null;
  }
}

/** A bare repository's own folder (a URL's mirror, repo-mirrors.ts), or null when `dir` is not one. */
export async function bareRepoOf(dir: string): Promise<string | null> {
  try {
    const [bare, gitDir] = (await git(["rev-parse", "--is-bare-repository", "--absolute-git-dir"], { cwd: dir })).trim().split("\n");
    return bare === "true" && gitDir ? gitDir : null;
  } catch {
    return null;
  }
}

/** Run git and return its exit code and output, without throwing (for commands where 1 is an answer). */
export function gitResult(args: string[], opts: { cwd: string; env?: NodeJS.ProcessEnv }): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    const child = execFile("git", args, { cwd: opts.cwd, env: opts.env ?? process.env, maxBuffer: 64 * 1024 * 1024 }, (err, stdout, stderr) => {
      const code = err ? (typeof (err as { code?: unknown }).code === "number" ? ((err as { code: number }).code) : 128) : 0;
      resolve({ code, stdout: stdout.toString(), stderr: stderr.toString() });
    });
    child.stdin?.end();
  });
}

/**
 * The environment for a commit Switchyard makes in `dir`: git's own identity when the repository
 * (or the user) has one configured, else Switchyard's as author and committer.
 */
export async function identityEnv(dir: string): Promise<NodeJS.ProcessEnv> {
  const email = await gitResult(["config", "user.email"], { cwd: dir });
  if (email.code === 0 && email.stdout.trim()) return process.env;
  return { ...process.env, GIT_AUTHOR_NAME: "Switchyard", GIT_AUTHOR_EMAIL: "switchyard@localhost", GIT_COMMITTER_NAME: "Switchyard", GIT_COMMITTER_EMAIL: "switchyard@localhost" };
}
