#!/usr/bin/env node
// The npm registry reachable here does not serve Tailwind's oxide binaries for other platforms,
// so `npm install` leaves them out of package-lock.json and `npm ci` then refuses the lock as out
// of sync. This adds their lock entries (os/cpu-restricted optional packages, never fetched on
// this platform). Run after any `npm install` that rewrites the lock.
import { readFileSync, writeFileSync } from "node:fs";

const file = new URL("../package-lock.json", import.meta.url);
const lock = JSON.parse(readFileSync(file, "utf8"));
const platforms = {
  "android-arm64": { os: ["android"], cpu: ["arm64"] },
  "darwin-arm64": { os: ["darwin"], cpu: ["arm64"] },
  "darwin-x64": { os: ["darwin"], cpu: ["x64"] },
  "freebsd-x64": { os: ["freebsd"], cpu: ["x64"] },
  "linux-arm-gnueabihf": { os: ["linux"], cpu: ["arm"] },
  "wasm32-wasi": { cpu: ["wasm32"] },
  "win32-arm64-msvc": { os: ["win32"], cpu: ["arm64"] },
  "win32-x64-msvc": { os: ["win32"], cpu: ["x64"] },
};
const oxide = lock.packages["node_modules/@tailwindcss/oxide"];
let added = 0;
for (const [name, version] of Object.entries(oxide?.optionalDependencies ?? {})) {
  const key = `node_modules/${name}`;
  if (lock.packages[key]) continue;
  const suffix = name.replace("@tailwindcss/oxide-", "");
  lock.packages[key] = { version, dev: true, license: "MIT", optional: true, ...(platforms[suffix] ?? { os: ["none"] }), engines: { node: ">= 20" } };
  added++;
}
writeFileSync(file, `${JSON.stringify(lock, null, 2)}\n`);
console.log(`added ${added} lock entries`);
