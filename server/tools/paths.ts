import { realpathSync } from "node:fs";
import { homedir } from "node:os";
import { basename, dirname, isAbsolute, join, relative, resolve, sep } from "node:path";

/** Workspace paths: relative paths are relative to the run's cwd; absolute ones are allowed but checked. */

export type WorkspacePath = {
  /** As resolved against the cwd. */
  abs: string;
  /** With symlinks of its existing part resolved: what the policy decides on. */
  real: string;
  /** For messages: relative to the cwd (`notes.txt`, `../other/x`) unless given as an absolute path. */
  display: string;
};

/** realpath of the deepest existing ancestor, joined with the part that does not exist yet. */
export function realpathLoose(path: string): string {
  try {
    return realpathSync(path);
  } catch {
    const parent = dirname(path);
    return parent === path ? path : join(realpathLoose(parent), basename(path));
  }
}

/** A posix-style path relative to `from`, or undefined when `to` is outside it. */
export function relativeInside(from: string, to: string): string | undefined {
  const rel = relative(from, to);
  if (rel === "") return ".";
  if (rel === ".." || rel.startsWith(`..${sep}`) || isAbsolute(rel)) return undefined;
  return rel.split(sep).join("/");
}

export function resolveWorkspacePath(cwd: string, input: string): WorkspacePath {
  if (input.trim() === "") throw new Error("path is empty; give a path relative to the workspace (e.g. \".\")");
  const expanded = input === "~" || input.startsWith("~/") ? join(homedir(), input.slice(1)) : input;
  const abs = resolve(cwd, expanded);
  const display = relativeInside(resolve(cwd), abs) ?? (isAbsolute(expanded) ? abs : relative(resolve(cwd), abs).split(sep).join("/"));
  return { abs, real: realpathLoose(abs), display };
}

/** How a path is shown relative to the cwd (absolute when outside). */
export function displayPath(cwd: string, abs: string): string {
  return relativeInside(resolve(cwd), abs) ?? abs;
}
