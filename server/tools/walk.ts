import type { Dirent } from "node:fs";
import { readdir } from "node:fs/promises";
import { join } from "node:path";
import { throwIfAborted } from "./guard";

/** A depth-first directory walk in name order, for list_directory, glob and search_files. */

export type WalkEntry = {
  /** Posix path relative to the walk's root. */
  rel: string;
  abs: string;
  kind: "file" | "dir" | "symlink" | "other";
  /** 1 for the root's children. */
  depth: number;
  /** A directory the walk did not enter (node_modules, .git, or at maxDepth). */
  notExpanded?: boolean;
};

export type WalkOptions = {
  /** Children of the root are depth 1; directories at maxDepth are listed but not entered. */
  maxDepth: number;
  includeHidden: boolean;
  signal: AbortSignal;
  /** Directory names listed but never entered (default node_modules and .git). */
  skipDirs?: ReadonlySet<string>;
};

export const DEFAULT_SKIP_DIRS: ReadonlySet<string> = new Set(["node_modules", ".git"]);

function kindOf(entry: Dirent): WalkEntry["kind"] {
  if (entry.isSymbolicLink()) return "symlink";
  if (entry.isDirectory()) return "dir";
  if (entry.isFile()) return "file";
  return "other";
}

async function children(dir: string): Promise<Dirent[]> {
  try {
    const entries = await readdir(dir, { withFileTypes: true });
    return entries.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  } catch (err) {
    // A directory that vanished or cannot be read mid-walk is skipped, not fatal.
    if (["ENOENT", "EACCES", "EPERM", "ENOTDIR"].includes((err as NodeJS.ErrnoException).code ?? "")) return [];
    throw err;
  }
}

export async function* walk(root: string, options: WalkOptions, prefix = "", depth = 1): AsyncGenerator<WalkEntry> {
  const skip = options.skipDirs ?? DEFAULT_SKIP_DIRS;
  for (const entry of await children(join(root, prefix))) {
    throwIfAborted(options.signal);
    if (!options.includeHidden && entry.name.startsWith(".")) continue;
    const rel = prefix ? `${prefix}/${entry.name}` : entry.name;
    const kind = kindOf(entry);
    const enter = kind === "dir" && depth < options.maxDepth && !skip.has(entry.name);
    yield { rel, abs: join(root, rel), kind, depth, ...(kind === "dir" && !enter ? { notExpanded: true } : {}) };
    if (enter) yield* walk(root, options, rel, depth + 1);
  }
}
