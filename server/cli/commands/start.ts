import { spawnSync } from "node:child_process";
import { existsSync, readdirSync, statSync } from "node:fs";
import { dirname, join } from "node:path";
import type { Command } from "commander";
import { REPO_ROOT } from "../../paths";
import { examples, local, type Cli } from "./common";

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

export function registerStart(program: Command, cli: Cli): void {
  const cmd = local(program.command("start"))
    .description("start the server and the dashboard (the SWITCHYARD_* variables apply)")
    .option("--host <host>", "bind address (default: SWITCHYARD_HOST, else 127.0.0.1)")
    .option("--port <port>", "port, 0 for a random one (default: SWITCHYARD_PORT, else 7422)")
    .option("--build-if-needed", "build the dashboard first when it is missing or older than its sources")
    .action(async (opts: { host?: string; port?: string; buildIfNeeded?: boolean }) => {
      if (opts.buildIfNeeded) buildDashboardIfNeeded();
      process.env.NODE_ENV ??= "production";
      // the server is loaded only by the command that runs it
      const { main } = await import("../../main");
      await main({ host: opts.host, port: opts.port });
      cli.exitCode = undefined; // keeps running until a signal
    });
  examples(cmd, "yard start", "SWITCHYARD_PORT=8080 yard start --host 0.0.0.0   # needs SWITCHYARD_TOKEN");
}
