import { existsSync, readFileSync } from "node:fs";
import { dirname, join } from "node:path";

/**
 * The repository root (where package.json is), found from this module's location, so paths hold
 * both when the TypeScript sources run through tsx and when the bundled `dist/yard.mjs` runs.
 */
function findRoot(from: string): string {
  for (let dir = from; ; dir = dirname(dir)) {
    const pkg = join(dir, "package.json");
    if (existsSync(pkg) && (JSON.parse(readFileSync(pkg, "utf8")) as { name?: string }).name === "switchyard") return dir;
    if (dirname(dir) === dir) throw new Error(`cannot find Switchyard's package.json above ${from}`);
  }
}

export const REPO_ROOT = findRoot(import.meta.dirname);
