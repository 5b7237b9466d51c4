import { createTRPCClient, httpBatchLink, httpSubscriptionLink, splitLink, type TRPCClient } from "@trpc/client";
import { EventSource as EventSourcePonyfill } from "eventsource";
import type { AppRouter } from "../trpc/router";
import { defaultUrl } from "./default-url";

export type { AppRouter };
export { defaultUrl };

export type ClientOptions = {
  /** Server base URL, e.g. http://127.0.0.1:7422 (default: SWITCHYARD_URL, then that). */
  url?: string;
  /** Bearer token (default: SWITCHYARD_TOKEN). */
  token?: string;
  /** The fetch queries and mutations go through (default: the global fetch; subscriptions always use it). */
  fetch?: Parameters<typeof httpBatchLink>[0]["fetch"];
};

export type SwitchyardClient = TRPCClient<AppRouter>;

/**
 * The typed client for scripts: queries and mutations over batched HTTP, subscriptions over SSE
 * (resumed from the last tracked id after a reconnect).
 */
export function createSwitchyardClient(options: ClientOptions = {}): SwitchyardClient {
  const base = (options.url ?? defaultUrl()).replace(/\/+$/, "");
  const token = options.token ?? (process.env.SWITCHYARD_TOKEN || undefined);
  const authHeaders: Record<string, string> = token ? { authorization: `Bearer ${token}` } : {};
  return createTRPCClient<AppRouter>({
    links: [
      splitLink({
        condition: (op) => op.type === "subscription",
        true: httpSubscriptionLink({
          url: `${base}/trpc`,
          EventSource: EventSourcePonyfill as unknown as typeof EventSource,
          eventSourceOptions: () =>
            ({
              fetch: (input: string | URL | Request, init?: RequestInit) =>
                fetch(input, { ...init, headers: { ...(init?.headers as Record<string, string> | undefined), ...authHeaders } }),
            }) as EventSourceInit,
        }),
        false: httpBatchLink({ url: `${base}/trpc`, headers: () => authHeaders, maxURLLength: 8000, maxItems: 100, ...(options.fetch ? { fetch: options.fetch } : {}) }),
      }),
    ],
  });
}
