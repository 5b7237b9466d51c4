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
    case "server.stopping":
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
