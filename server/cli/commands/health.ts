import type { Command } from ".";
import { clientFrom, connectionOptions, explain, parse } from "./common";

export const health: Command = {
  summary: "print the server's health as JSON (exit 1 if unreachable)",
  async run(args) {
    const { values } = parse(args, connectionOptions);
    const { url, client } = clientFrom(values);
    try {
      const h = await client.health.query();
      process.stdout.write(`${JSON.stringify(h)}\n`);
      return 0;
    } catch (err) {
      throw explain(err, url);
    }
  },
};
