import type { Command } from "commander";
import { examples, jsonOption, type Cli } from "./common";

export function registerLogin(program: Command, cli: Cli): void {
  const cmd = program
    .command("login")
    .description("print a one-time dashboard login link (servers with a token)")
    .action(async (opts: { json?: boolean }, self: Command) => {
      const { link } = await (await cli.client(self)).auth.loginLink.mutate();
      if (opts.json) return cli.json({ link });
      cli.print(link);
    });
  jsonOption(cmd);
  examples(cmd, "SWITCHYARD_TOKEN=... yard login");
}
