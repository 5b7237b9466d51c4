import { EventFeed } from "../components/EventFeed";
import { PageHeader } from "../components/PageHeader";
import { useServerHealth, useSystemInfo } from "../hooks/useServerHealth";
import { formatUptime } from "../lib/format";
import { useLiveEvents } from "../live/useLiveEvents";

export function HomePage() {
  return (
    <>
      <PageHeader title="Overview" description="Everything Switchyard does, as it happens: runs, agents, daemons and the server itself." />
      <ServerStats />
      <div className="mt-6">
        <EventFeed />
      </div>
    </>
  );
}

function ServerStats() {
  const health = useServerHealth();
  const info = useSystemInfo();
  const { events, connection } = useLiveEvents();
  const h = health.data;
  const latestId = Math.max(info.data?.lastEventId ?? 0, events.at(-1)?.id ?? 0);
  const stats = [
    { label: "Active runs", value: h?.activeRuns },
    { label: "Connected clients", value: h?.connectedClients },
    { label: "Latest event", value: info.data ? `#${latestId}` : undefined },
    { label: "Uptime", value: h ? formatUptime(h.uptime) : undefined },
  ];
  return (
    <dl
      className={`mt-6 grid grid-cols-2 gap-3 transition-opacity lg:grid-cols-4 ${connection.state === "live" ? "" : "opacity-60"}`}
      title={connection.state === "live" ? undefined : "Last known values: the server is not reachable right now"}
    >
      {stats.map(({ label, value }) => (
        <div key={label} className="rounded-xl border border-zinc-200 bg-white px-4 py-3 shadow-sm dark:border-zinc-800 dark:bg-zinc-900/60">
          <dt className="text-xs font-medium text-zinc-500 dark:text-zinc-400">{label}</dt>
          <dd className="mt-1 text-2xl font-semibold tracking-tight tabular-nums">{value ?? <span className="text-zinc-300 dark:text-zinc-700">—</span>}</dd>
        </div>
      ))}
    </dl>
  );
}
