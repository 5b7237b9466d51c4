/** Benchmark results: one row per measured goal, printed as a table with MET / MISSED. */
export type BenchRow = {
  bench: string;
  metric: string;
  value: string;
  goal: string;
  /** undefined: informational (no goal). */
  met?: boolean;
};

export function printTable(rows: BenchRow[]): string {
  const header = ["bench", "metric", "value", "goal", "result"];
  const cells = rows.map((r) => [r.bench, r.metric, r.value, r.goal, r.met === undefined ? "-" : r.met ? "MET" : "MISSED"]);
  const widths = header.map((h, i) => Math.max(h.length, ...cells.map((c) => c[i]!.length)));
  const line = (c: string[]) => `| ${c.map((x, i) => x.padEnd(widths[i]!)).join(" | ")} |`;
  const sep = `|${widths.map((w) => "-".repeat(w + 2)).join("|")}|`;
  return [line(header), sep, ...cells.map(line)].join("\n");
}

export const fmt = {
  rate: (n: number) => `${Math.round(n).toLocaleString("en-US")}/s`,
  ms: (n: number) => `${n.toFixed(1)} ms`,
  mb: (bytes: number) => `${(bytes / 1024 / 1024).toFixed(0)} MB`,
  ratio: (n: number) => `${n.toFixed(2)}x`,
};

export function percentile(sorted: number[], p: number): number {
  if (sorted.length === 0) return NaN;
  const i = Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1));
  return sorted[i]!;
}
