import type { Command } from "commander";
import { duration, table } from "../io";
import { examples, jsonOption, type Cli } from "./common";

/** `yard servers`: the servers sharing this server's database, live in the last 10 s. */
export function registerServers(program: Command, cli: Cli): void {
  const cmd = program
    .command("servers")
    .description("the servers sharing this server's database (several yard start on one PostgreSQL), with their last heartbeat")
    .action(async (opts: { json?: boolean }, self: Command) => {
      const all = await (await cli.client(self)).servers.list.query();
      if (opts.json) return cli.json(all);
      const now = Date.now();
      cli.print(
        table(
          all,
          [
            { header: "URL", value: (s) => `${s.url}${s.self ? " (this one)" : ""}`, flex: true },
            { header: "HOST", value: (s) => `${s.hostname}:${s.pid}` },
            { header: "UP", value: (s) => duration((now - s.startedAt) / 1000), align: "right" },
            { header: "BEAT", value: (s) => `${Math.max(0, Math.round((now - s.heartbeatAt) / 1000))}s ago`, align: "right" },
            { header: "VERSION", value: (s) => s.version },
          ],
          { width: cli.width, style: cli.style },
        ),
      );
    });
  jsonOption(cmd);
  examples(cmd, "yard servers", "yard servers --json --url https://yard.example.com");
}
