import type { Command } from ".";
import { clientFrom, connectionOptions, explain, parse } from "./common";

export const login: Command = {
  summary: "print a one-time dashboard login link (needs the token)",
  async run(args) {
    const { values } = parse(args, connectionOptions);
    const { url, client } = clientFrom(values);
    try {
      const { link } = await client.auth.loginLink.mutate();
      process.stdout.write(`${link}\n`);
      return 0;
    } catch (err) {
      throw explain(err, url);
    }
  },
};
