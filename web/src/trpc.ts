import { QueryClient } from "@tanstack/react-query";
import { httpBatchLink, httpSubscriptionLink, splitLink } from "@trpc/client";
import { createTRPCReact } from "@trpc/react-query";
import type { inferRouterOutputs } from "@trpc/server";
import type { AppRouter } from "../../server/trpc/router";
import { isNotFound } from "./lib/errors";
import { resumeLink } from "./live/resume-link";

/** Typed hooks for every procedure of the server (types only: no server code is bundled). */
export const trpc = createTRPCReact<AppRouter>();

export type RouterOutputs = inferRouterOutputs<AppRouter>;

/** Same origin: the server serves this page and `/trpc`; a login cookie (if any) goes along. */
export function createTrpcClient() {
  return trpc.createClient({
    links: [
      splitLink({
        condition: (op) => op.type === "subscription",
        // EventSource: the browser reconnects and sends Last-Event-ID; when it gives up (an HTTP
        // error), resumeLink starts it again with backoff, from the last tracked id.
        true: [resumeLink(), httpSubscriptionLink({ url: "/trpc" })],
        false: httpBatchLink({ url: "/trpc" }),
      }),
    ],
  });
}

export function createQueryClient() {
  return new QueryClient({
    defaultOptions: {
      queries: {
        refetchOnWindowFocus: false,
        // a missing run, agent or daemon stays missing: say so at once rather than after ~6 s of retries
        retry: (failures, err) => !isNotFound(err) && failures < 2,
        retryDelay: (attempt) => Math.min(1000 * 2 ** attempt, 10_000),
      },
    },
  });
}
