import type { Command } from "commander";
import { examples, local, type Cli } from "./common";

export function registerStart(program: Command, cli: Cli): void {
  const cmd = local(program.command("start"))
    .description("start the server and the dashboard (the SWITCHYARD_* variables apply)")
    .option("--host <host>", "bind address (default: SWITCHYARD_HOST, else 127.0.0.1)")
    .option("--port <port>", "port, 0 for a random one (default: SWITCHYARD_PORT, else 7422)")
    .option("--build-if-needed", "build the dashboard first when it is missing or older than its sources")
    .action(async (opts: { host?: string; port?: string; buildIfNeeded?: boolean }) => {
      if (opts.buildIfNeeded) (await import("../dashboard-build")).buildDashboardIfNeeded();
      process.env.NODE_ENV ??= "production";
      // the server is loaded only by the command that runs it
      const { main } = await import("../../main");
      await main({ host: opts.host, port: opts.port });
      cli.exitCode = undefined; // keeps running until a signal
    });
  examples(cmd, "yard start", "SWITCHYARD_PORT=8080 yard start --host 0.0.0.0   # needs SWITCHYARD_TOKEN");
}
