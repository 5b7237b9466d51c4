import type { Health } from "../../shared/api";
import type { Services } from "../trpc/context";

export function healthOf(s: Services): Health {
  return {
    status: "ok",
    uptime: Math.round((Date.now() - s.startedAt) / 10) / 100,
    activeRuns: s.stats.activeRuns(),
    connectedClients: s.stats.connectedClients(),
  };
}
