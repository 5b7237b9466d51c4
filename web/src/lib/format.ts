import type { BusEvent, EventScope } from "../../../shared/events";

const timeFormat = new Intl.DateTimeFormat(undefined, { hour: "2-digit", minute: "2-digit", second: "2-digit", hour12: false });

/** "14:03:07.412" in local time. */
export function formatTime(iso: string): string {
  const d = new Date(iso);
  if (Number.isNaN(d.getTime())) return iso;
  return `${timeFormat.format(d)}.${String(d.getMilliseconds()).padStart(3, "0")}`;
}

/** "3d 4h", "2h 05m", "4m 09s", "12s". */
export function formatUptime(seconds: number): string {
  const s = Math.max(0, Math.floor(seconds));
  const d = Math.floor(s / 86_400);
  const h = Math.floor((s % 86_400) / 3600);
  const m = Math.floor((s % 3600) / 60);
  const sec = s % 60;
  if (d > 0) return `${d}d ${h}h`;
  if (h > 0) return `${h}h ${String(m).padStart(2, "0")}m`;
  if (m > 0) return `${m}m ${String(sec).padStart(2, "0")}s`;
  return `${sec}s`;
}

/** A one-line, human summary of an event's payload. */
export function summarize(event: BusEvent): string {
  switch (event.type) {
    case "server.started": {
      const p = event.payload;
      const resumed = p.resumedFromEventId > 0 ? ` · resumed after #${p.resumedFromEventId}` : "";
      return `Switchyard ${p.version} listening on ${p.host}:${p.port} (pid ${p.pid})${resumed}`;
    }
    case "server.shutdown_started":
      return `Stopping: ${event.payload.reason}`;
    case "system.noted":
      return event.payload.message;
    default:
      return compactJson((event as { payload?: unknown }).payload);
  }
}

export function compactJson(value: unknown, max = 200): string {
  let text: string;
  try {
    text = JSON.stringify(value) ?? "";
  } catch {
    text = String(value);
  }
  return text.length > max ? `${text.slice(0, max - 1)}…` : text;
}

const SCOPE_LABELS: Record<keyof EventScope, string> = {
  runId: "run",
  agentId: "agent",
  daemonId: "daemon",
  conversationId: "conversation",
};

/** [["run", "r_12"], ["agent", "a_3"]] for the badges of a row. */
export function scopeBadges(scope: EventScope): Array<[label: string, id: string]> {
  const badges: Array<[string, string]> = [];
  for (const key of Object.keys(SCOPE_LABELS) as Array<keyof EventScope>) {
    const id = scope[key];
    if (id) badges.push([SCOPE_LABELS[key], id]);
  }
  return badges;
}

/** The domain of a dotted event type ("server.started" -> "server"), for its color. */
export function eventDomain(type: string): string {
  return type.split(".")[0] ?? type;
}

/** "850ms", "12.4s", "4m 09s", "2h 05m": how long something took (or has been going). */
export function formatDuration(ms: number): string {
  if (!Number.isFinite(ms) || ms < 0) return "—";
  if (ms < 1000) return `${Math.round(ms)}ms`;
  if (ms < 60_000) return `${(ms / 1000).toFixed(ms < 10_000 ? 1 : 0)}s`;
  return formatUptime(ms / 1000);
}

/** Milliseconds from start to end (or to now, while it runs); undefined without a start. */
export function elapsedMs(startedAt: string | null | undefined, endedAt: string | null | undefined, now: number): number | undefined {
  if (!startedAt) return undefined;
  const start = Date.parse(startedAt);
  const end = endedAt ? Date.parse(endedAt) : now;
  return Number.isNaN(start) || Number.isNaN(end) ? undefined : Math.max(0, end - start);
}

const compact = new Intl.NumberFormat("en", { notation: "compact", maximumFractionDigits: 1 });
const full = new Intl.NumberFormat("en");

/** "1.2K", "340". */
export function formatTokens(n: number): string {
  return n < 10_000 ? full.format(n) : compact.format(n);
}

/** "1,234 in · 567 out" for a title attribute. */
export function describeUsage(u: { promptTokens: number; completionTokens: number }): string {
  return `${full.format(u.promptTokens)} prompt · ${full.format(u.completionTokens)} completion tokens`;
}

const dateTime = new Intl.DateTimeFormat(undefined, { month: "short", day: "numeric", hour: "2-digit", minute: "2-digit", hour12: false });

/** "just now", "5m ago", "3h ago", else "Mar 4, 14:03". */
export function formatRelative(iso: string, now: number): string {
  const t = Date.parse(iso);
  if (Number.isNaN(t)) return iso;
  const s = Math.round((now - t) / 1000);
  if (s < 10) return "just now";
  if (s < 60) return `${s}s ago`;
  if (s < 3600) return `${Math.floor(s / 60)}m ago`;
  if (s < 86_400) return `${Math.floor(s / 3600)}h ago`;
  return dateTime.format(new Date(t));
}

/** "1 file", "3 files", "1,200 lines" (the count in the viewer's locale). */
export function plural(n: number, one: string, many = `${one}s`): string {
  return `${n.toLocaleString()} ${n === 1 ? one : many}`;
}

/** "812 B", "4.2 KB", "13 MB", "1.2 GB". */
export function formatBytes(n: number): string {
  if (n < 1024) return `${n} B`;
  const units = ["KB", "MB", "GB", "TB"];
  let v = n / 1024;
  let i = 0;
  while (v >= 1024 && i < units.length - 1) {
    v /= 1024;
    i++;
  }
  return `${v < 10 ? v.toFixed(1) : Math.round(v)} ${units[i]}`;
}

/** "$0.00", "$0.0123" (small amounts keep 4 decimals), "$12.40". */
export function formatUsd(usd: number): string {
  if (usd === 0) return "$0.00";
  return usd < 1 ? `$${usd.toFixed(4)}` : `$${usd.toFixed(2)}`;
}
