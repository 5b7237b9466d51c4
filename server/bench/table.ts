/**
 * Benchmark results: one row per goal, printed as a table. A row's verdict:
 * - MISSED when what arrived is not what was sent (a lost or changed item is never noise);
 * - NOISY when the machine was busy with other work while the row ran (load above NOISY_LOAD),
 *   whatever the value: a number taken on a busy machine neither meets nor misses a goal;
 * - MET / MISSED against the goal otherwise; "-" for a row without a goal (a limit, a detail).
 */

/** What a row moved, counted at the receiving end, against what was sent. */
export type Count = {
  sent: number;
  arrived: number;
  unit: string;
  /** False when as many arrived but not the same (a changed text). */
  intact?: boolean;
};

export type BenchRow = {
  bench: string;
  metric: string;
  value: string;
  /** "-" for a row without a goal. */
  goal: string;
  /** The value against the goal; undefined: no goal (a limit, a floor, a detail). */
  met?: boolean;
  count?: Count;
  /** Cores kept busy by other processes while the row ran (see load.ts); set by main.ts. */
  load?: number;
  /** A size (bytes on disk), not a time: the machine's load does not change it, so it is never NOISY. */
  size?: boolean;
};

export type Verdict = "MET" | "MISSED" | "NOISY" | "-";

/** Above this load (cores busy with other work, on average) a row is NOISY, not MET. */
export const NOISY_LOAD = 0.3;

export const countOk = (c: Count): boolean => c.arrived === c.sent && c.intact !== false;

export function verdict(row: BenchRow): Verdict {
  if (row.count && !countOk(row.count)) return "MISSED";
  if (row.met === undefined) return "-";
  if (!row.size && (row.load === undefined || !(row.load <= NOISY_LOAD))) return "NOISY";
  return row.met ? "MET" : "MISSED";
}

const n = (x: number) => x.toLocaleString("en-US");

export function fmtCount(c: Count | undefined): string {
  if (!c) return "";
  return `${n(c.arrived)}/${n(c.sent)} ${c.unit}${c.intact === false ? " (changed)" : ""}`;
}

export function printTable(rows: BenchRow[]): string {
  const header = ["bench", "metric", "value", "goal", "arrived/sent", "load", "result"];
  const cells = rows.map((r) => [r.bench, r.metric, r.value, r.goal, fmtCount(r.count), r.load === undefined ? "?" : r.load.toFixed(2), verdict(r)]);
  const widths = header.map((h, i) => Math.max(h.length, ...cells.map((c) => c[i]!.length)));
  const line = (c: string[]) => `| ${c.map((x, i) => x.padEnd(widths[i]!)).join(" | ")} |`;
  const sep = `|${widths.map((w) => "-".repeat(w + 2)).join("|")}|`;
  return [line(header), sep, ...cells.map(line)].join("\n");
}

/** The rows that carry a goal; throws when one goal has two rows (STYLE.md 8: one row per goal). */
export function goalRows(rows: BenchRow[]): BenchRow[] {
  const goals = rows.filter((r) => r.met !== undefined);
  const seen = new Set<string>();
  for (const r of goals) {
    const key = `${r.bench} | ${r.metric}`;
    if (seen.has(key)) throw new Error(`two rows for one goal: ${key}`);
    seen.add(key);
  }
  return goals;
}

export function summary(rows: BenchRow[]): string {
  const goals = goalRows(rows);
  const by = (v: Verdict) => goals.filter((r) => verdict(r) === v).length;
  const lost = rows.filter((r) => r.count && !countOk(r.count)).length;
  return (
    `${goals.length} distinct goals: ${by("MET")} met, ${by("MISSED")} missed, ${by("NOISY")} noisy` +
    (lost ? `; ${lost} row(s) lost or changed what they moved` : "") +
    `\nload = cores kept busy by processes outside this bench while the row ran; above ${NOISY_LOAD} a row is NOISY, not MET`
  );
}

export const fmt = {
  rate: (x: number) => `${n(Math.round(x))}/s`,
  ms: (x: number) => `${x.toFixed(1)} ms`,
  mb: (bytes: number) => `${(bytes / 1024 / 1024).toFixed(0)} MB`,
  ratio: (x: number) => `${x.toFixed(2)}x`,
  int: n,
};

export function percentile(sorted: number[], p: number): number {
  if (sorted.length === 0) return NaN;
  const i = Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1));
  return sorted[i]!;
}

/** The median (the lower middle for an even count: a measured value, never an average of two). */
export function median(xs: readonly number[]): number {
  if (xs.length === 0) return NaN;
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.floor((s.length - 1) / 2)]!;
}

/** Counts of several parts (runs, rounds) added up. */
export function addCounts(unit: string, parts: ReadonlyArray<{ sent: number; arrived: number; intact?: boolean }>): Count {
  const c: Count = { unit, sent: 0, arrived: 0 };
  for (const p of parts) {
    c.sent += p.sent;
    c.arrived += p.arrived;
    if (p.intact === false) c.intact = false;
  }
  return c;
}
