import { setImmediate as nextTurn } from "node:timers/promises";

/** The event-loop time that all sliced consumers together may take in one turn (split evenly). */
export const TURN_BUDGET_MS = 4;
/** The shortest slice, however many consumers share the turn. */
export const SLICE_MIN_MS = 0.25;
/** Items a slice always handles before it looks at the clock (a short answer never waits a turn). */
export const SLICE_MIN_ITEMS = 8;

/** The consumers sharing the event loop's turns (one per process; tests make their own, with a clock). */
export class TurnShare {
  active = 0;
  /** Counts the event loop's turns while someone watches (one check-phase callback a turn at most). */
  private turnCount = 0;
  private ticking = false;

  constructor(
    readonly budgetMs = TURN_BUDGET_MS,
    readonly now: () => number = () => performance.now(),
  ) {}

  /** One consumer's slice: an even share of the turn, never below SLICE_MIN_MS. */
  sliceMs(): number {
    return Math.max(SLICE_MIN_MS, this.budgetMs / Math.max(1, this.active));
  }

  /** The current turn; it changes once the event loop has gone round (a slice that waited for I/O starts afresh). */
  turn(): number {
    if (!this.ticking) {
      this.ticking = true;
      setImmediate(() => {
        this.ticking = false;
        this.turnCount++;
      });
    }
    return this.turnCount;
  }
}

const shared = new TurnShare();

/**
 * A cooperative time slice for a loop that would otherwise hold the event loop. A web stream read
 * while its parts are already there (a model's answer arriving faster than it is handled: every
 * part goes through the AI SDK's chain of transform streams) runs entirely in microtasks: nothing
 * else (I/O, timers, other runs, a new run's first text) gets a turn until it runs dry, hundreds
 * of milliseconds under load. A reader that calls `due()` before each item and, when it says so,
 * awaits `yield()` (one trip through the event loop's check phase, behind every callback already
 * waiting) holds the loop for one slice at a time: the readers of parallel streams take turns, in
 * the order they yielded (FIFO), each keeping its own order, and all of them together about
 * TURN_BUDGET_MS per turn, so a turn stays short however many streams there are.
 *
 * The clock starts at the first item (waiting for the stream is not work) and is read only after
 * `minItems` items. `close()` when done, so the others' slices grow back.
 */
export class TimeSlice {
  private items = 0;
  private until = Number.POSITIVE_INFINITY;
  private turn = -1;
  private counted = false;

  constructor(
    private readonly share: TurnShare = shared,
    private readonly minItems = SLICE_MIN_ITEMS,
  ) {}

  /**
   * Count one item; true when the slice is used up and the caller should `await yield()` first.
   * A slice lasts one turn of the event loop at most: a reader that waited for its stream (the
   * loop went round meanwhile) starts a fresh one, so it never gives up a turn it did not use.
   */
  due(): boolean {
    const turn = this.share.turn();
    if (this.items++ === 0 || turn !== this.turn) {
      if (!this.counted) {
        this.counted = true;
        this.share.active++;
      }
      this.items = 1;
      this.turn = turn;
      this.until = this.share.now() + this.share.sliceMs();
    }
    return this.items > this.minItems && this.share.now() >= this.until;
  }

  /** Let the event loop run everything waiting, then start a fresh slice. */
  async yield(): Promise<void> {
    await nextTurn();
    this.items = 0;
  }

  /** The consumer is done: it no longer shares the turn. */
  close(): void {
    if (!this.counted) return;
    this.counted = false;
    this.share.active--;
  }
}
