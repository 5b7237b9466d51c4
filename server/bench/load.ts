import { readFileSync, readdirSync } from "node:fs";

/**
 * The machine's load while a row ran, apart from the bench itself: the CPU time that processes
 * outside this bench's process tree used, in cores on average (0.5 = half a core kept busy by
 * other work the whole time). The kernel's load average would count the bench's own server,
 * subscribers and browser too (a busy server alone reads 1), so it could never tell a quiet
 * machine from a busy one; this is the same idea with the bench taken out.
 *
 * From /proc: the machine's busy ticks (/proc/stat) minus this tree's ticks. The tree's ticks are
 * summed over its live processes, each with the ticks of the children it has reaped (cutime,
 * cstime), so a child that ends during a row is still counted once, by its parent.
 */

/** Busy CPU ticks of the whole machine (USER_HZ, all cores). */
function machineTicks(): number {
  const line = readFileSync("/proc/stat", "utf8").split("\n", 1)[0]!;
  const [user, nice, system, _idle, _iowait, irq, softirq, steal] = line.trim().split(/\s+/).slice(1).map(Number) as number[];
  return user! + nice! + system! + irq! + softirq! + (steal ?? 0);
}

type Proc = { ppid: number; ticks: number };

/** Every process's parent and its ticks (own + reaped children's). */
function processes(): Map<number, Proc> {
  const out = new Map<number, Proc>();
  for (const name of readdirSync("/proc")) {
    const pid = Number(name);
    if (!Number.isInteger(pid)) continue;
    try {
      const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
      const f = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
      out.set(pid, { ppid: Number(f[1]), ticks: Number(f[11]) + Number(f[12]) + Number(f[13]) + Number(f[14]) });
    } catch {
      // gone meanwhile
    }
  }
  return out;
}

/** Ticks of `root` and every live descendant (with what each has reaped). */
export function treeTicks(root = process.pid): number {
  const procs = processes();
  const children = new Map<number, number[]>();
  for (const [pid, p] of procs) {
    const list = children.get(p.ppid);
    if (list) list.push(pid);
    else children.set(p.ppid, [pid]);
  }
  let sum = 0;
  const stack = [root];
  while (stack.length > 0) {
    const pid = stack.pop()!;
    sum += procs.get(pid)?.ticks ?? 0;
    stack.push(...(children.get(pid) ?? []));
  }
  return sum;
}

/**
 * Processes outside this bench's tree that work for it (the PostgreSQL backends serving its
 * databases): their ticks count as the bench's, not as others' load. Each pid's last reading is
 * kept, so a backend that exits during a row still counts with what it was last seen using.
 */
const adoptedTicks = new Map<number, number>();
const finders = new Set<() => number[]>();

/** Count the processes `find` names (asked at every reading) as the bench's own; returns the undo. */
export function adopt(find: () => number[]): () => void {
  finders.add(find);
  return () => {
    finders.delete(find);
    if (finders.size === 0) adoptedTicks.clear();
  };
}

function ticksOf(pid: number): number | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    const f = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    return Number(f[11]) + Number(f[12]) + Number(f[13]) + Number(f[14]);
  } catch {
    return undefined;
  }
}

function adoptedSum(): number {
  for (const find of finders) {
    for (const pid of find()) {
      const t = ticksOf(pid);
      if (t !== undefined) adoptedTicks.set(pid, t);
    }
  }
  let sum = 0;
  for (const t of adoptedTicks.values()) sum += t;
  return sum;
}

/** Processes whose command line (a PostgreSQL backend's title names its database) contains one of `names`. */
export function processesNamed(names: readonly string[]): number[] {
  const out: number[] = [];
  for (const entry of readdirSync("/proc")) {
    const pid = Number(entry);
    if (!Number.isInteger(pid)) continue;
    try {
      const cmdline = readFileSync(`/proc/${pid}/cmdline`, "utf8");
      if (names.some((n) => cmdline.includes(n))) out.push(pid);
    } catch {
      // gone meanwhile
    }
  }
  return out;
}

/** The bench's ticks: its process tree and the processes it adopted. */
const benchTicks = () => treeTicks() + adoptedSum();

const available = (() => {
  try {
    machineTicks();
    return true;
  } catch {
    return false;
  }
})();

type Span = { machine: number; tree: number; at: number };

function openSpan(): Span | undefined {
  return available ? { machine: machineTicks(), tree: benchTicks(), at: performance.now() } : undefined;
}

/** Ticks others used during the span, and its length. */
function closeSpan(o: Span): { ticks: number; ms: number } {
  const others = machineTicks() - o.machine - (benchTicks() - o.tree);
  return { ticks: Math.max(0, others), ms: performance.now() - o.at };
}

/**
 * The others' load over the sections of a bench that measure something (its setup, such as
 * writing a million-line log, left out), or over the whole bench when it marks no section.
 */
export class LoadMeter {
  private sections = { ticks: 0, ms: 0, count: 0 };
  private open: Span | undefined;
  private whole: Span | undefined;
  private wholeResult: { ticks: number; ms: number } | undefined;

  startWhole(): void {
    this.whole = openSpan();
  }

  endWhole(): void {
    if (this.whole) this.wholeResult = closeSpan(this.whole);
    this.whole = undefined;
  }

  /** Run `fn` as a measured section (a section inside a section counts once). */
  async section<T>(fn: () => Promise<T>): Promise<T> {
    if (this.open || !available) return fn();
    const span = openSpan()!;
    this.open = span;
    try {
      return await fn();
    } finally {
      this.open = undefined;
      const { ticks, ms } = closeSpan(span);
      this.sections.ticks += ticks;
      this.sections.ms += ms;
      this.sections.count++;
    }
  }

  /** Cores busy with other work, on average; undefined without /proc. */
  result(): number | undefined {
    const r = this.sections.count > 0 ? this.sections : this.wholeResult;
    if (!r || r.ms <= 0) return undefined;
    return r.ticks / 100 / (r.ms / 1000);
  }
}

/** The meter of the bench now running (main.ts sets a fresh one per bench). */
export let meter = new LoadMeter();

export function resetMeter(): LoadMeter {
  meter = new LoadMeter();
  return meter;
}

/** Mark a measured section of the bench now running. */
export const measured = <T>(fn: () => Promise<T>): Promise<T> => meter.section(fn);

/**
 * Wait until the processes under `pid` (and the adopted ones) are idle: under 2 ticks (20 ms of CPU) in each of two
 * 250 ms windows in a row (a server still draining a backlog, writing files or checkpointing
 * must not share the CPU with the next measurement). Gives up after `timeoutMs`; says whether
 * it got there.
 */
export async function waitIdle(pids: number | number[], timeoutMs = 30_000): Promise<boolean> {
  if (!available) return true;
  const list = Array.isArray(pids) ? pids : [pids];
  const ticks = () => list.reduce((s, p) => s + treeTicks(p), 0) + adoptedSum();
  const started = performance.now();
  let quiet = 0;
  let last = ticks();
  while (performance.now() - started < timeoutMs) {
    await new Promise((r) => setTimeout(r, 250));
    const now = ticks();
    quiet = now - last < 2 ? quiet + 1 : 0;
    last = now;
    if (quiet >= 2) return true;
  }
  process.stderr.write(`bench: processes ${list.join(", ")} still busy after ${timeoutMs} ms; measuring anyway\n`);
  return false;
}
