import { cp, readdir } from "node:fs/promises";
import { join, relative } from "node:path";

/**
 * Moving a CLI session between config dirs (account failover): every file or folder under the
 * old dir whose name contains the session id is copied to the same relative path under the new
 * one. That is Claude Code's `projects/<cwd slug>/<id>.jsonl` (and its `<id>/` folder) and Codex's
 * `sessions/YYYY/MM/DD/rollout-<time>-<id>.jsonl`. Returns how many entries were copied.
 */
export async function copySessionFiles(fromDir: string, toDir: string, sessionId: string, maxDepth = 6): Promise<number> {
  if (fromDir === toDir || sessionId.length < 8) return 0;
  let copied = 0;
  const walk = async (dir: string, depth: number): Promise<void> => {
    let entries;
    try {
      entries = await readdir(dir, { withFileTypes: true });
    } catch {
      return;
    }
    for (const e of entries) {
      const path = join(dir, e.name);
      if (e.name.includes(sessionId)) {
        await cp(path, join(toDir, relative(fromDir, path)), { recursive: true, force: true, preserveTimestamps: true });
        copied++;
      } else if (e.isDirectory() && depth < maxDepth) {
        await walk(path, depth + 1);
      }
    }
  };
  await walk(fromDir, 0);
  return copied;
}
