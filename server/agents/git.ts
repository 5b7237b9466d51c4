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
