import type { WorkerInfo, WorkerProvider } from "../../../shared/workers";

/** "just now", "3s ago", "4m ago", "2h ago", else the date: when a worker was last heard of, to the second. */
export function formatAgo(iso: string, now: number): string {
  const t = Date.parse(iso);
  if (Number.isNaN(t)) return iso;
  const s = Math.max(0, Math.floor((now - t) / 1000));
  if (s < 1) return "just now";
  if (s < 60) return `${s}s ago`;
  if (s < 3600) return `${Math.floor(s / 60)}m ago`;
  if (s < 86_400) return `${Math.floor(s / 3600)}h ago`;
  return new Date(t).toLocaleString();
}

/** The command that starts a worker against this server (the dashboard's origin) with its token. */
export function workerCommand(serverUrl: string, token: string): string {
  return `yard worker --server ${serverUrl} --token ${token}`;
}

/** "claude 2.1.3", or "codex (no --version)" when the CLI did not say. */
export function providerLabel(p: WorkerProvider): string {
  return p.version ? `${p.name} ${shortVersion(p.version)}` : `${p.name} (no --version)`;
}

/** "2.1.3 (Claude Code)" -> "2.1.3"; "codex-cli 0.5.0" -> "0.5.0": the first thing that looks like a version, else the text. */
function shortVersion(version: string): string {
  return /\d+\.\d+(?:\.\d+)?(?:[-+][\w.]+)?/.exec(version)?.[0] ?? version;
}

/** "127.0.0.1:7422" from the server URL a worker is connected to (its full URL on hover). */
export function serverLabel(url: string): string {
  try {
    return new URL(url).host;
  } catch {
    return url;
  }
}

/** Workers the spawn form offers by name: connected ones, drained or not (a drained one queues the agent). */
export function placeableWorkers(workers: readonly WorkerInfo[]): WorkerInfo[] {
  return workers.filter((w) => w.state === "connected");
}

/** "gpu, big-disk" as typed -> ["gpu", "big-disk"] (commas or spaces, no empties, no repeats). */
export function parseLabels(text: string): string[] {
  return [...new Set(text.split(/[\s,]+/).filter(Boolean))];
}
