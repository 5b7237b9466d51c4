import { AsyncLocalStorage } from "node:async_hooks";

/**
 * better-sqlite3 runs every statement on one connection, synchronously. A transaction whose body
 * awaits (a domain's `store.tx`, an event's async row write) holds that connection across
 * microtasks, and any other write issued meanwhile would land inside it and be rolled back with
 * it. The gate lets one such transaction hold the connection at a time; every other writer waits
 * for it to end (`exclusive`), or writes at once when nothing holds it (`run`, the synchronous
 * hot paths: the event group commit, agent output, daemon triggers).
 */
export class WriteGate {
  private held: Promise<void> | undefined;
  /**
   * Where a holder's body runs, to refuse a transaction opened inside it. Off in production: on
   * Node 20 AsyncLocalStorage, once run, turns on promise hooks that tax every promise of the
   * process (~100 ns each; the daemon trigger path went ~4-8% slower); tests and development catch
   * a nested transaction, which production would wait on forever.
   */
  private readonly inside = process.env.NODE_ENV === "production" ? undefined : new AsyncLocalStorage<true>();

  /** A transaction holds the connection now. */
  get busy(): boolean {
    return this.held !== undefined;
  }

  /** Run `fn` alone: after the transaction that holds the connection now, if any. */
  async exclusive<T>(fn: () => Promise<T>): Promise<T> {
    if (this.inside?.getStore()) {
      throw new Error("A SQLite transaction was opened inside another one: write through the `tx` you were given");
    }
    while (this.held) await this.held;
    let release!: () => void;
    this.held = new Promise<void>((resolve) => (release = resolve));
    try {
      return await (this.inside ? this.inside.run(true, fn) : fn());
    } finally {
      this.held = undefined;
      release();
    }
  }

  /** Run `fn` now when nothing holds the connection (synchronously), else once it is free. */
  run<T>(fn: () => T): T | Promise<T> {
    if (!this.held) return fn();
    return this.exclusive(async () => fn());
  }
}
