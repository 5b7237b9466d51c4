import { spawnSync } from "node:child_process";
import { existsSync, readdirSync, statSync } from "node:fs";
import { dirname, join } from "node:path";
import type { Command } from ".";
import { main } from "../../main";
import { REPO_ROOT } from "../../paths";
import { parse } from "./common";

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
  const vite = join(dirname(require_resolve("vite/package.json")), "bin", "vite.js");
  const result = spawnSync(process.execPath, [vite, "build", "--logLevel", "warn"], { cwd: root, stdio: ["ignore", "inherit", "inherit"] });
  if (result.status !== 0) throw new Error("building the dashboard failed (see above); `npm run build` repeats it");
}

function require_resolve(id: string): string {
  return join(root, "node_modules", id);
}

export const start: Command = {
  summary: "start the server and dashboard (SWITCHYARD_* env vars apply)",
  async run(args) {
    const { values } = parse(args, {
      host: { type: "string" },
      port: { type: "string" },
      "build-if-needed": { type: "boolean", default: false },
    });
    if (values["build-if-needed"]) buildDashboardIfNeeded();
    process.env.NODE_ENV ??= "production";
    await main({ host: values.host, port: values.port });
    return -1;
  },
};
