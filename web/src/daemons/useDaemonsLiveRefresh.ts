import { useLiveRefresh } from "../live/useLiveRefresh";

/** Refresh on daemon events, of one daemon when `daemonId` is given. */
export function useDaemonsLiveRefresh(refresh: () => void, daemonId?: string, throttleMs = 250): void {
  useLiveRefresh((e) => e.type.startsWith("daemon.") && (!daemonId || e.scope.daemonId === daemonId), refresh, throttleMs);
}
