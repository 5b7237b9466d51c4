import { useServerHealth, useServers, useSystemInfo } from "../hooks/useServerHealth";
import { formatUptime, plural } from "../lib/format";

/** Version and health, small, at the foot of the navigation. */
export function ServerStatus() {
  const info = useSystemInfo();
  const health = useServerHealth();
  const servers = useServers();
  const cluster = servers.data && servers.data.length > 1 ? servers.data : undefined;
  return (
    <div data-testid="server-status" className="space-y-0.5 text-xs text-zinc-500 dark:text-zinc-400">
      <div className="font-medium text-zinc-700 dark:text-zinc-300">
        Switchyard {info.data ? <span data-testid="server-version">v{info.data.version}</span> : "…"}
      </div>
      {health.data ? (
        <div className="tabular-nums" title="Uptime · active runs · connected clients (dashboards, CLIs, SSE streams)">
          up {formatUptime(health.data.uptime)} · {plural(health.data.activeRuns, "run")} · {plural(health.data.connectedClients, "client")}
        </div>
      ) : health.isError ? (
        <div className="text-red-600 dark:text-red-400">Server unreachable</div>
      ) : (
        <div>Checking health…</div>
      )}
      {cluster ? (
        <div
          data-testid="server-cluster"
          className="tabular-nums"
          title={`Servers on this database (this dashboard is served by the first):\n${[...cluster].sort((a, b) => Number(b.self) - Number(a.self)).map((s) => `${s.url} · ${s.hostname} · pid ${s.pid}`).join("\n")}`}
        >
          {plural(cluster.length, "server")} on one database
        </div>
      ) : null}
    </div>
  );
}
