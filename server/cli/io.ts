/**
 * Where the CLI writes and how: people get text (colors only on a TTY and never with NO_COLOR,
 * tables that fit the terminal), scripts get JSON with `--json`. Commands write through an `Io`
 * so tests run the whole CLI in-process with captured output.
 */

export interface Output {
  write(s: string): unknown;
  isTTY?: boolean;
  columns?: number;
}

export interface Io {
  stdout: Output;
  stderr: Output;
  env: Record<string, string | undefined>;
}

export const processIo = (): Io => ({ stdout: process.stdout, stderr: process.stderr, env: process.env });

/** Colors: only when the output is a terminal, never when NO_COLOR is set, to anything (https://no-color.org). */
export function colorsOn(out: Output, env: Io["env"]): boolean {
  return !!out.isTTY && env.NO_COLOR === undefined;
}

export type Paint = (s: string) => string;
const sgr = (open: number, close: number): Paint => (s) => `\x1b[${open}m${s}\x1b[${close}m`;
const plain: Paint = (s) => s;

export interface Style {
  bold: Paint;
  dim: Paint;
  red: Paint;
  green: Paint;
  yellow: Paint;
  cyan: Paint;
}

export function styleFor(on: boolean): Style {
  if (!on) return { bold: plain, dim: plain, red: plain, green: plain, yellow: plain, cyan: plain };
  return { bold: sgr(1, 22), dim: sgr(2, 22), red: sgr(31, 39), green: sgr(32, 39), yellow: sgr(33, 39), cyan: sgr(36, 39) };
}

/** A status word in the color people expect: done is green, waiting on you yellow, broken red. */
export function statusPaint(style: Style, status: string): Paint {
  if (/^(completed|idle|running|available|ok|answered|allowed|merged)$/.test(status)) return style.green;
  if (/^(needs_you|waiting|waiting_for_input|pending|exhausted|paused|starting|queued|warn)/.test(status)) return style.yellow;
  if (/^(failed|crashed|error|invalid|denied|cancelled|fail)/.test(status)) return style.red;
  return plain;
}

export interface Column<Row> {
  header: string;
  value: (row: Row) => string;
  /** May be shortened (with …) so the table fits, the rightmost first; never ids a user copies. */
  flex?: boolean;
  /** Where a flexible value is cut: its end (default), or its start (paths: the end tells most). */
  cut?: "start";
  align?: "right";
  paint?: (value: string, row: Row) => string;
}

const GAP = "  ";

/** Rows as a table no wider than `width` (80 unless the terminal says otherwise), headers dimmed. */
export function table<Row>(rows: Row[], columns: Array<Column<Row>>, opts: { width?: number; style?: Style } = {}): string {
  const style = opts.style ?? styleFor(false);
  const cells = rows.map((r) => columns.map((c) => oneLine(c.value(r))));
  const widths = columns.map((c, i) => Math.max(c.header.length, ...cells.map((row) => row[i]!.length)));
  shrink(widths, columns, opts.width ?? 80);
  const cell = (text: string, i: number, paint: (s: string) => string) => {
    const w = widths[i]!;
    const cut = text.length <= w ? text : columns[i]!.cut === "start" ? `…${text.slice(text.length - w + 1)}` : `${text.slice(0, Math.max(0, w - 1))}…`;
    const room = " ".repeat(w - cut.length);
    return columns[i]!.align === "right" ? room + paint(cut) : paint(cut) + room;
  };
  const line = (parts: string[]) => parts.join(GAP).trimEnd();
  const header = line(columns.map((c, i) => cell(c.header, i, style.dim)));
  const body = cells.map((row, r) => line(row.map((text, i) => cell(text, i, (s) => columns[i]!.paint?.(s, rows[r]!) ?? s))));
  return `${[header, ...body].join("\n")}\n`;
}

/** Narrow the flexible columns, the rightmost first, until the row fits (never below 8 or their header). */
function shrink<Row>(widths: number[], columns: Array<Column<Row>>, width: number): void {
  let over = widths.reduce((a, b) => a + b, 0) + GAP.length * (widths.length - 1) - width;
  for (let i = columns.length - 1; i >= 0 && over > 0; i--) {
    if (!columns[i]!.flex) continue;
    const least = Math.max(columns[i]!.header.length, 8);
    const cut = Math.min(over, Math.max(0, widths[i]! - least));
    widths[i] = widths[i]! - cut;
    over -= cut;
  }
}

const oneLine = (s: string) => s.replace(/\s*\n\s*/g, " ").trim();

/** "12s ago", "5m ago", "3h ago", "2d ago" from an ISO time (or epoch ms). */
export function ago(at: string | number | null | undefined, now = Date.now()): string {
  if (at === null || at === undefined) return "-";
  const t = typeof at === "number" ? at : Date.parse(at);
  if (Number.isNaN(t)) return "-";
  const s = Math.max(0, Math.round((now - t) / 1000));
  if (s < 60) return `${s}s ago`;
  if (s < 3600) return `${Math.floor(s / 60)}m ago`;
  if (s < 86400) return `${Math.floor(s / 3600)}h ago`;
  return `${Math.floor(s / 86400)}d ago`;
}

/** "3m 20s" from seconds. */
export function duration(seconds: number): string {
  const s = Math.floor(seconds);
  if (s < 60) return `${s}s`;
  if (s < 3600) return `${Math.floor(s / 60)}m ${s % 60}s`;
  return `${Math.floor(s / 3600)}h ${Math.floor((s % 3600) / 60)}m`;
}

export const plural = (n: number, word: string) => `${n} ${word}${n === 1 ? "" : "s"}`;
