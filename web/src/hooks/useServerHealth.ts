import { trpc } from "../trpc";

/** Server health, polled; shared by every component that asks (one request per interval). */
export function useServerHealth() {
  return trpc.health.useQuery(undefined, { refetchInterval: 5000, retry: false });
}

/** Version, home, auth: fetched once (and again after a reconnect). */
export function useSystemInfo() {
  return trpc.system.info.useQuery(undefined, { staleTime: Infinity, retry: true });
}

/** The servers sharing this server's database (several on PostgreSQL), polled with the health. */
export function useServers() {
  return trpc.servers.list.useQuery(undefined, { refetchInterval: 5000, retry: false });
}
