import { createTRPCClient, unstable_localLink } from "@trpc/client";
import type { SwitchyardClient } from "../client";
import type { Logger } from "../log";
import type { Context, Services } from "../trpc/context";
import { appRouter, type AppRouter } from "../trpc/router";

/**
 * The typed tRPC client of the in-process `/mcp` server: the procedures are called directly, with
 * the request's principal, through the same input validation, domain-error translation and error
 * formatter (appCode, issues, secrets scrubbed) as `/trpc`. The tools see exactly what the stdio
 * server's HTTP client sees.
 */
export function createLocalClient(services: Services, principal: Context["principal"], log: Logger): SwitchyardClient {
  return createTRPCClient<AppRouter>({
    links: [
      unstable_localLink({
        router: appRouter,
        createContext: async () => ({ ...services, principal }),
        onError: ({ error, path }) => {
          if (error.code === "INTERNAL_SERVER_ERROR") log.error({ path, err: { message: services.redact(error.message), stack: error.stack && services.redact(error.stack) } }, "MCP tool procedure failed");
        },
      }),
    ],
  });
}
