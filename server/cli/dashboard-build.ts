import { spawnSync } from "node:child_process";
import { existsSync, readdirSync, statSync } from "node:fs";
import { dirname, join } from "node:path";
import { REPO_ROOT } from "../paths";

/** `yard start --build-if-needed`: the dashboard is built first when it is stale (loaded by that command only). */

const root = REPO_ROOT;

/** Newest modification time under the dashboard sources. */
function newestSource(): number {
  let newest = 0;
  const walk = (dir: string) => {
    for (const entry of readdirSync(dir, { withFileTypes: true })) {
      const p = join(dir, entry.name);
      if (entry.isDirectory()) walk(p);
      else newest = Math.max(newest, statSync(p).mtimeMs);
    }
  };
  walk(join(root, "web"));
  for (const f of ["vite.config.ts", "package-lock.json"]) if (existsSync(join(root, f))) newest = Math.max(newest, statSync(join(root, f)).mtimeMs);
  return newest;
}

/** Build the dashboard when it is missing or older than its sources (so `npm start` is enough). */
export function buildDashboardIfNeeded(webDir = join(root, "dist", "web")): void {
  const index = join(webDir, "index.html");
  if (existsSync(index) && statSync(index).mtimeMs >= newestSource()) return;
  if (!existsSync(join(root, "web"))) return;
  process.stderr.write("yard: building the dashboard (once; later starts reuse it)...\n");
  const vite = join(dirname(join(root, "node_modules", "vite/package.json")), "bin", "vite.js");
  const result = spawnSync(process.execPath, [vite, "build", "--logLevel", "warn"], { cwd: root, stdio: ["ignore", "inherit", "inherit"] });
  if (result.status !== 0) throw new Error("building the dashboard failed (see above); `npm run build` repeats it");
}
