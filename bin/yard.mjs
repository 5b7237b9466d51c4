#!/usr/bin/env node
// The `yard` CLI.
// - An installed package (no TypeScript sources beside this file) always runs the built
//   `dist/yard.mjs`; it never builds and never loads tsx.
// - In a clone it runs `dist/yard.mjs` when that is newer than the TypeScript sources it was built
//   from (one plain Node process: quick to start, small in memory), and the sources through tsx
//   otherwise.
//   `yard start --build-if-needed` (what `npm start` runs) builds the bundle first.
import { existsSync, readFileSync, statSync } from "node:fs";
import { join } from "node:path";

const root = join(import.meta.dirname, "..");
const bundle = join(root, "dist", "yard.mjs");
const sources = join(root, "server", "cli", "main.ts");

/**
 * The bundle is fresh when none of the sources it was built from (listed beside it by
 * scripts/build.mjs, `yard.inputs.json`) nor package.json is newer than it or gone: one stat each,
 * no walk of server/ and shared/ (a source that none of them imports is not in the bundle).
 */
function bundleIsFresh() {
  let inputs;
  try {
    inputs = JSON.parse(readFileSync(join(root, "dist", "yard.inputs.json"), "utf8"));
  } catch {
    return false; // no list: built by an older build script, or not built
  }
  const built = statSync(bundle, { throwIfNoEntry: false })?.mtimeMs;
  if (built === undefined) return false;
  return [...inputs, "package.json"].every((p) => (statSync(join(root, p), { throwIfNoEntry: false })?.mtimeMs ?? Infinity) <= built);
}

async function buildBundle() {
  try {
    const { buildCli } = await import("../scripts/build.mjs");
    await buildCli();
    return true;
  } catch {
    return false; // the sources still run through tsx
  }
}

async function runClone() {
  const argv = process.argv.slice(2);
  const fromSource = Boolean(process.env.SWITCHYARD_FROM_SOURCE);
  let fresh = fromSource ? false : bundleIsFresh();
  if (!fresh && !fromSource && argv[0] === "start" && argv.includes("--build-if-needed")) fresh = await buildBundle();
  if (fresh) return import(bundle);
  const { register } = await import("tsx/esm/api");
  register();
  return import("../server/cli/main.ts");
}

if (!existsSync(sources)) {
  if (!existsSync(bundle)) {
    process.stderr.write(`yard: ${bundle} is missing: this package was packed without its build (\`npm run build\` before \`npm pack\`)\n`);
    process.exit(1);
  }
  await import(bundle);
} else {
  await runClone();
}
