#!/usr/bin/env node
// The `yard` CLI.
// - An installed package (no TypeScript sources beside this file) always runs the built
//   `dist/yard.mjs`; it never builds and never loads tsx.
// - In a clone it runs `dist/yard.mjs` when that is newer than the TypeScript sources (one plain
//   Node process: quick to start, small in memory), and the sources through tsx otherwise.
//   `yard start --build-if-needed` (what `npm start` runs) builds the bundle first.
import { existsSync, readdirSync, statSync } from "node:fs";
import { join } from "node:path";

const root = join(import.meta.dirname, "..");
const bundle = join(root, "dist", "yard.mjs");
const sources = join(root, "server", "cli", "main.ts");

function newest(dir) {
  let t = 0;
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const p = join(dir, entry.name);
    if (entry.isDirectory()) t = Math.max(t, newest(p));
    else if (entry.name.endsWith(".ts") && !entry.name.endsWith(".test.ts")) t = Math.max(t, statSync(p).mtimeMs);
  }
  return t;
}

function bundleIsFresh() {
  if (!existsSync(bundle)) return false;
  const newestSource = Math.max(newest(join(root, "server")), newest(join(root, "shared")), statSync(join(root, "package.json")).mtimeMs);
  return statSync(bundle).mtimeMs >= newestSource;
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
