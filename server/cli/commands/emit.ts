import type { Command } from ".";
import { clientFrom, connectionOptions, explain, parse } from "./common";

export const emit: Command = {
  summary: "put a note on the event bus: yard emit <message>",
  async run(args) {
    const { values, positionals } = parse(args, connectionOptions, true);
    const message = positionals.join(" ");
    if (!message) throw new Error("usage: yard emit <message>");
    const { url, client } = clientFrom(values);
    try {
      const { id } = await client.events.emit.mutate({ message });
      process.stdout.write(`${JSON.stringify({ id })}\n`);
      return 0;
    } catch (err) {
      throw explain(err, url);
    }
  },
};
