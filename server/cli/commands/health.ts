import type { Command } from "commander";
import type { Health } from "../../../shared/api";
import { duration, plural } from "../io";
import { examples, jsonOption, type Cli } from "./common";

export function registerHealth(program: Command, cli: Cli): void {
  const cmd = program
    .command("health")
    .description("is the server up? (exit 1 when it cannot be reached)")
    .action(async (opts: { json?: boolean }, self: Command) => {
      // GET /health (the same answer as the health query): no tRPC client to load for it
      const h = (await cli.getJson(self, "/health")) as Health;
      if (opts.json) return cli.json(h);
      const { green } = cli.style;
      cli.print(`${green(h.status)}: ${cli.url} up ${duration(h.uptime)}, ${plural(h.activeRuns, "active run")}, ${plural(h.connectedClients, "connected client")}`);
    });
  jsonOption(cmd);
  examples(cmd, "yard health", "yard health --json --url http://127.0.0.1:8080");
}
