#!/usr/bin/env node
// The `yard` CLI. It runs the bundled `dist/yard.mjs` when that is newer than the TypeScript
// sources (one plain Node process: quick to start, small in memory), and the sources through tsx
// otherwise. `yard start --build-if-needed` (what `npm start` runs) builds the bundle first.
import { existsSync, readdirSync, statSync } from "node:fs";
import { join } from "node:path";

const root = join(import.meta.dirname, "..");
const bundle = join(root, "dist", "yard.mjs");

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
  const sources = Math.max(newest(join(root, "server")), newest(join(root, "shared")), statSync(join(root, "package.json")).mtimeMs);
  return statSync(bundle).mtimeMs >= sources;
}

async function buildBundle() {
  const { build } = await import("esbuild");
  try {
    await build({
      entryPoints: [join(root, "server", "cli", "main.ts")],
      bundle: true,
      platform: "node",
      format: "esm",
      packages: "external",
      target: "node20",
      outfile: bundle,
      logLevel: "warning",
    });
    return true;
  } catch {
    return false; // the sources still run through tsx
  }
}

const argv = process.argv.slice(2);
let fresh = process.env.SWITCHYARD_FROM_SOURCE ? false : bundleIsFresh();
if (!fresh && !process.env.SWITCHYARD_FROM_SOURCE && argv[0] === "start" && argv.includes("--build-if-needed")) fresh = await buildBundle();

if (fresh) {
  await import(bundle);
} else {
  const { register } = await import("tsx/esm/api");
  register();
  await import("../server/cli/main.ts");
}
