import { execFile } from "node:child_process";

/** Run git without a shell, stdin ignored; resolves with stdout, rejects with git's own message. */
export function git(args: string[], opts: { cwd: string; env?: NodeJS.ProcessEnv; maxBuffer?: number }): Promise<string> {
  return new Promise((resolve, reject) => {
    const child = execFile("git", args, { cwd: opts.cwd, env: opts.env ?? process.env, maxBuffer: opts.maxBuffer ?? 64 * 1024 * 1024 }, (err, stdout, stderr) => {
      if (err) {
        const msg = (stderr || err.message).toString().trim();
        reject(Object.assign(new Error(`git ${args[0]} failed: ${msg}`), { stderr: msg, exitCode: (err as { code?: number }).code }));
        return;
      }
      resolve(stdout.toString());
    });
    child.stdin?.end();
  });
}

/** The top level of the repository containing `dir`, or null when it is not in one. */
export async function repoRootOf(dir: string): Promise<string | null> {
  try {
    return (await git(["rev-parse", "--show-toplevel"], { cwd: dir })).trim();
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
