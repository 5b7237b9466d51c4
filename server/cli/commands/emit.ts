import type { Command } from "commander";
import { examples, jsonOption, type Cli } from "./common";

export function registerEmit(program: Command, cli: Cli): void {
  const cmd = program
    .command("emit")
    .description("put a note on the event bus")
    .argument("<message...>", "the note")
    .action(async (words: string[], opts: { json?: boolean }, self: Command) => {
      const { id } = await (await cli.client(self)).events.emit.mutate({ message: words.join(" ") });
      if (opts.json) return cli.json({ id });
      cli.print(`emitted event ${id}`);
    });
  jsonOption(cmd);
  examples(cmd, 'yard emit "deploy started"');
}
