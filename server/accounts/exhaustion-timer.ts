import { and, eq, isNotNull, lte } from "drizzle-orm";
import type { Store } from "../db/store";
import type { Logger } from "../log";

/** An account whose usage limit passed. `announced`: this server freed it (another one may have first). */
export type FreedAccount = { id: string; label: string; provider: string; announced: boolean };

/**
 * The accounts' failover timer: one timer at the earliest exhaustion end. A pass frees the accounts
 * whose limit passed (a compare-and-set on the stored end: an account exhausted again meanwhile
 * stays so, and of several servers racing for one only one frees it), then arms the timer for the
 * next end. Passes run one after the other, each reading what the one before wrote.
 */
export class ExhaustionTimer {
  private timer: NodeJS.Timeout | undefined;
  private passes: Promise<void> = Promise.resolve();
  private closed = false;

  constructor(
    private readonly store: Store,
    private readonly log: Logger,
    private readonly onFreed: (account: FreedAccount) => void,
  ) {}

  /** A pass after the ones under way; resolves when it is done (never rejects: a failure is logged). */
  schedule(): Promise<void> {
    this.passes = this.passes.then(
      () => this.pass(),
      () => this.pass(),
    );
    return this.passes.catch((err: unknown) => this.log.warn({ err }, "account timers not set"));
  }

  /** Stops the timer; resolves once a pass under way is over. */
  close(): Promise<void> {
    this.closed = true;
    clearTimeout(this.timer);
    return this.passes.catch(() => {});
  }

  private async pass(): Promise<void> {
    if (this.closed) return;
    const { accounts } = this.store.t;
    const now = Date.now();
    const pending = await this.store.read.select().from(accounts).where(isNotNull(accounts.exhaustedUntil));
    let changed = false;
    for (const r of pending.filter((p) => (p.exhaustedUntil as number) <= now)) {
      const freed = await this.store.tx((tx) =>
        tx
          .update(accounts)
          .set({ exhaustedUntil: null, exhaustedReason: null, updatedAt: Date.now() })
          .where(and(eq(accounts.id, r.id), lte(accounts.exhaustedUntil, now)))
          .returning({ id: accounts.id }),
      );
      // lost: freed by another server first (this one's listeners still hear it), or exhausted again
      if (freed.length === 0) changed = true;
      this.onFreed({ id: r.id, label: r.label, provider: r.provider, announced: freed.length > 0 });
    }
    if (this.closed) return;
    clearTimeout(this.timer);
    this.timer = undefined;
    // a row that changed under this pass may end later than it read: the next pass reads it again
    if (changed) void this.schedule();
    const next = pending.map((r) => r.exhaustedUntil as number).filter((t) => t > now);
    if (next.length === 0) return;
    // setTimeout holds at most ~24.8 days; a later reset is re-checked then
    const delay = Math.min(Math.min(...next) - now + 50, 2 ** 31 - 1);
    this.timer = setTimeout(() => void this.schedule(), delay);
    this.timer.unref();
  }
}
