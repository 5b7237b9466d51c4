import { existsSync, readFileSync } from "node:fs";
import { dirname, join } from "node:path";

/** The npm package name (package.json's `name`). */
export const PACKAGE_NAME = "@switchyard-dev/yard";

/**
 * The package root (where package.json is), found from this module's location, so paths hold
 * when the TypeScript sources run through tsx, when the bundled `dist/yard.mjs` (or one of its
 * `dist/chunks/`) runs in a clone, and in an installed package (which ships dist/, the migrations
 * and the runtime files under server/ at the same relative paths).
 */
function findRoot(from: string): string {
  for (let dir = from; ; dir = dirname(dir)) {
    const pkg = join(dir, "package.json");
    if (existsSync(pkg) && (JSON.parse(readFileSync(pkg, "utf8")) as { name?: string }).name === PACKAGE_NAME) return dir;
    if (dirname(dir) === dir) throw new Error(`cannot find Switchyard's package.json above ${from}`);
  }
}

export const REPO_ROOT = findRoot(import.meta.dirname);
