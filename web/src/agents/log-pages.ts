import type { AgentOutputLine } from "../../../shared/agents";

/** Lines a block holds: what one request for the virtual log asks for. */
export const BLOCK = 200;

/**
 * The lines of a huge log the virtual view holds: blocks of BLOCK lines as they were fetched, at
 * most `max` of them (the ones farthest from where the reader is go first), plus the lines the log
 * opened with (the head), which stay.
 */
export class LogPages {
  private readonly blocks = new Map<number, AgentOutputLine[]>();
  private readonly head = new Map<number, AgentOutputLine>();
  private readonly pending = new Set<number>();
  private total = 0;

  constructor(private readonly max = 60) {}

  /** The lines the log opened with: blocks they cover whole (up to `total`) are complete. */
  seed(lines: readonly AgentOutputLine[], total: number): void {
    this.total = total;
    for (const l of lines) this.head.set(l.line, l);
    const blocks = new Set(lines.map((l) => blockOf(l.line)));
    for (const b of blocks) {
      const end = Math.min(total, (b + 1) * BLOCK);
      const whole: AgentOutputLine[] = [];
      for (let n = b * BLOCK; n < end; n++) {
        const l = this.head.get(n);
        if (!l) break;
        whole.push(l);
      }
      if (whole.length === end - b * BLOCK && whole.length > 0) this.blocks.set(b, whole);
    }
  }

  line(n: number): AgentOutputLine | undefined {
    return this.blocks.get(blockOf(n))?.[n % BLOCK] ?? this.head.get(n);
  }

  /**
   * Blocks in [from, to) (or down to `to` when it is below `from`) that are neither held whole nor
   * asked for, nearest to `from` first. A block that ended short of the total (the log grew since
   * it was fetched) is missing again.
   */
  missing(from: number, to: number): number[] {
    const out: number[] = [];
    const step = from <= to ? 1 : -1;
    for (let b = from; b !== to; b += step) {
      if (b < 0 || this.pending.has(b)) continue;
      const held = this.blocks.get(b);
      if (!held || held.length < Math.min(BLOCK, this.total - b * BLOCK)) out.push(b);
    }
    return out;
  }

  asked(block: number): void {
    this.pending.add(block);
  }

  /** A block arrived (or failed: `lines` undefined); the farthest from `near` go past `max`. */
  answered(block: number, lines: AgentOutputLine[] | undefined, near: number): void {
    this.pending.delete(block);
    if (!lines) return;
    this.blocks.set(block, lines);
    if (this.blocks.size <= this.max) return;
    const far = [...this.blocks.keys()].sort((a, b) => Math.abs(b - near) - Math.abs(a - near));
    for (const b of far.slice(0, this.blocks.size - this.max)) this.blocks.delete(b);
  }

  /** The log grew (a live agent): the blocks that end short of it are missing again. */
  grew(total: number): void {
    this.total = Math.max(this.total, total);
  }

  get size(): number {
    return this.blocks.size;
  }
}

export const blockOf = (line: number): number => Math.floor(line / BLOCK);

/** Most blocks one call asks for (the server's limit is 5,000 lines a call). */
export const MAX_RUN = 25;

/** Blocks as runs of consecutive ones, at most MAX_RUN each: one call a run. */
export function runsOf(blocks: readonly number[]): Array<{ from: number; count: number }> {
  const runs: Array<{ from: number; count: number }> = [];
  for (const b of [...new Set(blocks)].sort((x, y) => x - y)) {
    const run = runs[runs.length - 1];
    if (run && run.from + run.count === b && run.count < MAX_RUN) run.count++;
    else runs.push({ from: b, count: 1 });
  }
  return runs;
}

/** Blocks kept around a view at rest, each side. */
export const AROUND = 3;
/** Blocks next to the view asked for with it (each side at rest, ahead when moving). */
const NEXT = 2;

/**
 * The blocks to ask for: `now`, the missing ones in view and the NEXT ones beside it (ahead of a
 * moving reader); `later`, in a request of their own so they do not hold the first back: around a
 * view at rest AROUND blocks each side, ahead of a reader moving `pace` lines a frame the blocks of
 * its next `aheadFrames` frames, asked once the nearest of them is within half of that (a larger
 * request now and then, not one block every frame).
 */
export function blocksToAsk(pages: LogPages, v: { firstBlock: number; lastBlock: number; blocks: number; pace: number; aheadFrames: number }): { now: number[]; later: number[] } {
  const down = (n: number) => pages.missing(v.lastBlock + 1, Math.min(v.blocks, v.lastBlock + 1 + n));
  const up = (n: number) => pages.missing(v.firstBlock - 1, Math.max(-1, v.firstBlock - 1 - n));
  const inView = pages.missing(v.firstBlock, v.lastBlock + 1);
  if (v.pace === 0) {
    const near = [...down(1), ...up(1)];
    const around = [...down(AROUND), ...up(AROUND)].filter((b) => !near.includes(b));
    return { now: [...inView, ...near], later: around };
  }
  const ahead = Math.min(MAX_RUN, Math.ceil((Math.abs(v.pace) * v.aheadFrames) / BLOCK) + 1);
  const next = v.pace > 0 ? down(ahead) : up(ahead);
  const edge = v.pace > 0 ? v.lastBlock : v.firstBlock;
  const soon = next.filter((b) => Math.abs(b - edge) <= NEXT);
  const nearest = next[0];
  const due = nearest !== undefined && Math.abs(nearest - edge) <= Math.ceil(ahead / 2);
  return { now: [...inView, ...soon], later: due ? next.filter((b) => !soon.includes(b)) : [] };
}
