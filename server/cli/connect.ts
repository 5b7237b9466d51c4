import { createSwitchyardClient, type SwitchyardClient } from "../client";
import { httpFetch } from "./http-fetch";

/**
 * The typed client as the CLI makes it, loaded by `Cli` only when a command talks to a server
 * (`yard --help`, `completion`, `start` never load tRPC): queries and mutations over node:http
 * (http-fetch.ts), subscriptions over SSE as every client has them.
 */
export function connect(url: string, token: string | undefined): SwitchyardClient {
  return createSwitchyardClient({ url, token, fetch: httpFetch });
}
