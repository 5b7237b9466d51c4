import { readdirSync, statSync } from "node:fs";
import { join } from "node:path";

/** Polling file watcher for daemon watch_paths: path -> mtime (ms), bounded in size. */

const MAX_FILES = 10_000;
const SKIP = new Set([".git", "node_modules"]);

export type WatchState = Record<string, number>;

export function scanWatchPaths(paths: readonly string[]): WatchState {
  const state: WatchState = {};
  let count = 0;
  const visit = (path: string, depth: number) => {
    if (count >= MAX_FILES) return;
    let stat;
    try {
      stat = statSync(path);
    } catch {
      return;
    }
    if (!stat.isDirectory()) {
      state[path] = stat.mtimeMs;
      count++;
      return;
    }
    if (depth > 20) return;
    let names: string[];
    try {
      names = readdirSync(path);
    } catch {
      return;
    }
    for (const name of names.sort()) if (!SKIP.has(name)) visit(join(path, name), depth + 1);
  };
  for (const p of paths) visit(p, 0);
  return state;
}

/** Paths added, changed or removed between two scans, sorted. */
export function changedPaths(before: WatchState, after: WatchState): string[] {
  const out = new Set<string>();
  for (const [path, mtime] of Object.entries(after)) if (before[path] !== mtime) out.add(path);
  for (const path of Object.keys(before)) if (!(path in after)) out.add(path);
  return [...out].sort();
}
