import { EventCatalog, scopeKey, type BusEvent, type EventPayload, type EventScope, type EventType, type ScopeFilter } from "../../shared/events";
import type { RowWrite } from "../db/store";
import type { EventFence, EventRow, EventStorage } from "./event-store";

type Pending = { row: EventRow; event: BusEvent; write?: RowWrite; resolve: (e: BusEvent) => void; reject: (err: Error) => void };

const isPromise = <T>(v: T | Promise<T>): v is Promise<T> => typeof (v as { then?: unknown } | null)?.then === "function";

export type PublishOptions = {
  /**
   * Row writes that belong to this event (a status change, a queued message): run inside the same
   * transaction as the event's insert, in publish order, in a savepoint of their own, with that
   * transaction's query builder (`tx`: write through it, never through another handle). When it
   * throws (a compare-and-set that lost), its writes are rolled back, the event is not stored nor
   * delivered, and the publish rejects with that error; the rest of the batch is unaffected.
   */
  write?: RowWrite;
  /**
   * The publisher's lease on what the event is about (a run or daemon it runs as that lease's
   * owner): on a store several servers share, the event is stored only while that lease is still
   * this server's at that epoch, else the publish rejects with LEASE_LOST and nobody sees it.
   */
  fence?: EventFence;
};
type Listener = (event: BusEvent) => void;

export type BusOptions = {
  /** Validate payloads against the catalogue (default: on, except when NODE_ENV=production). */
  validate?: boolean;
  /** Commit at once when this many events are waiting (default 4096). */
  maxBatch?: number;
};

export type SubscribeOptions = {
  /** Deliver events with id > afterId (default 0: everything stored). */
  afterId?: number;
  scope?: ScopeFilter;
  signal?: AbortSignal;
  /** Live events buffered before the subscriber falls back to reading the store (default 10,000). */
  highWaterMark?: number;
};

export class BusClosedError extends Error {
  readonly code = "SHUTTING_DOWN";
  constructor() {
    super("The event bus is closed: the server is shutting down");
  }
}

/**
 * The typed event bus. `publish` persists the event in a group commit (one transaction per
 * event-loop turn, or per `maxBatch` events), where the store gives it its global monotonic id,
 * and only then delivers it; its promise resolves after the commit: from then on the event
 * survives kill -9. On a store shared by several processes (PostgreSQL) the others' events are
 * delivered too, in id order with this process's own, as their commits are announced.
 */
export class EventBus<S extends EventStorage = EventStorage> {
  /** The newest id delivered to this process's listeners. */
  private committedId = 0;
  /** Resolves once the newest stored id is known (at once on SQLite). */
  private ready: Promise<void> | undefined;
  /** A commit under way (PostgreSQL): the next batch waits for it, so batches commit in order. */
  private committing: Promise<void> | undefined;
  /** Reading other processes' events from the store and delivering them (PostgreSQL). */
  private catchingUp: Promise<void> | undefined;
  private catchUpAgain = false;
  private unwatch: (() => Promise<void>) | undefined;
  private pending: Pending[] = [];
  /** How many pending events carry row writes (none: the plain group commit). */
  private pendingWrites = 0;
  private flushTimer: NodeJS.Immediate | undefined;
  private readonly listeners = new Set<Listener>();
  private readonly typed = new Map<string, Set<Listener>>();
  /** Wakes every waiting subscriber (on close). */
  private readonly wakers = new Set<() => void>();
  private readonly validate: boolean;
  private readonly maxBatch: number;
  private closed = false;
  /** The ISO form of the last publish time (many events share a millisecond). */
  private isoAt = 0;
  private iso = "";

  constructor(
    readonly store: S,
    options: BusOptions = {},
  ) {
    const maxId = store.maxId();
    if (isPromise(maxId)) this.ready = maxId.then((id) => void (this.committedId = id));
    else this.committedId = maxId;
    this.validate = options.validate ?? process.env.NODE_ENV !== "production";
    this.maxBatch = options.maxBatch ?? 4096;
  }

  /**
   * Ready to publish, and, on a store shared by several processes, delivering their events as
   * their commits are announced. Resolves at once on SQLite.
   */
  async open(): Promise<this> {
    await this.ready;
    if (this.store.watch && !this.unwatch) {
      this.unwatch = await this.store.watch(() => this.catchUp());
      this.catchUp();
    }
    return this;
  }

  /** The id of the newest committed event. */
  get lastId(): number {
    return this.committedId;
  }

  get subscriberCount(): number {
    return this.listeners.size;
  }

  publish<T extends EventType>(type: T, payload: EventPayload<T>, scope: EventScope = {}, options: PublishOptions = {}): Promise<BusEvent<T>> {
    if (this.closed) return Promise.reject(new BusClosedError());
    const schema = EventCatalog[type];
    if (!schema) throw new Error(`Unknown event type "${type}": add it to the catalogue in shared/events`);
    const value = this.validate ? schema.parse(payload) : payload;
    const now = Date.now();
    if (now !== this.isoAt) {
      this.isoAt = now;
      this.iso = new Date(now).toISOString();
    }
    const event = { id: 0, ts: this.iso, type, scope, payload: value } as BusEvent<T>;
    const row: EventRow = { id: 0, ts: now, type, scope, payloadJson: JSON.stringify(value) };
    if (options.fence) row.fence = options.fence;
    return new Promise<BusEvent<T>>((resolve, reject) => {
      const pending: Pending = { row, event, resolve: resolve as (e: BusEvent) => void, reject };
      if (options.write) {
        pending.write = options.write;
        this.pendingWrites++;
      }
      this.pending.push(pending);
      if (this.pending.length >= this.maxBatch) this.flush();
      else this.flushTimer ??= setImmediate(() => this.flush());
    });
  }

  /** Commit everything pending now, then deliver it (on PostgreSQL: once the commit before it is done). */
  flush(): void {
    if (this.flushTimer) {
      clearImmediate(this.flushTimer);
      this.flushTimer = undefined;
    }
    if (this.pending.length === 0 || this.committing) return;
    if (this.ready) {
      this.committing = this.ready.then(() => {
        this.ready = undefined;
        this.committing = undefined;
        this.flush();
      });
      return;
    }
    const batch = this.pending;
    this.pending = [];
    const withWrites = this.pendingWrites > 0;
    this.pendingWrites = 0;
    let result: Array<number | Error> | Promise<Array<number | Error>>;
    try {
      result = this.store.append(
        batch.map((p) => p.row),
        withWrites ? batch.map((p) => p.write) : undefined,
      );
    } catch (err) {
      this.failed(batch, err);
      return;
    }
    if (!isPromise(result)) {
      this.committed(batch, result);
      return;
    }
    this.committing = result
      .then(
        (ids) => this.committed(batch, ids),
        (err: unknown) => this.failed(batch, err),
      )
      .finally(() => {
        this.committing = undefined;
        if (this.pending.length > 0) this.flush();
      });
  }

  /** Nothing of this batch was stored: no subscriber saw it. */
  private failed(batch: Pending[], err: unknown): void {
    const error = err instanceof Error ? err : new Error(String(err));
    for (const p of batch) p.reject(error);
  }

  private committed(batch: Pending[], ids: Array<number | Error>): void {
    const kept: Pending[] = [];
    batch.forEach((p, i) => {
      const id = ids[i];
      if (id instanceof Error || id === undefined) {
        p.reject(id ?? new Error("the store returned no id"));
        return;
      }
      p.row.id = id;
      (p.event as { id: number }).id = id;
      kept.push(p);
    });
    if (kept.length === 0) return;
    // others committed between our last delivered event and this batch (a shared store): theirs first
    if (this.store.watch && (this.catchingUp || kept[0]!.row.id > this.committedId + 1)) {
      this.catchUp(kept);
      return;
    }
    this.deliverOwn(kept);
  }

  /** Deliver this process's committed events (in id order) and resolve their publishers. */
  private deliverOwn(kept: Pending[]): void {
    for (const p of kept) {
      if (p.row.id <= this.committedId) {
        p.resolve(p.event); // already delivered from the store by a catch-up
        continue;
      }
      this.committedId = p.row.id;
      this.deliver(p.event);
      p.resolve(p.event);
    }
  }

  /**
   * Read what other processes committed after our last delivered id and deliver it, in order;
   * then our own batch (`own`), whose publishers resolve once it is delivered. One catch-up at a
   * time; one asked for meanwhile runs again afterwards.
   */
  private catchUp(own?: Pending[]): void {
    if (this.closed && !own) return;
    const run = async (): Promise<void> => {
      const upTo = own ? own[0]!.row.id - 1 : Number.POSITIVE_INFINITY;
      for (;;) {
        const page = await this.store.readAfter(this.committedId, undefined, 1000);
        const theirs = page.filter((e) => e.id <= upTo);
        for (const e of theirs) {
          if (e.id <= this.committedId) continue; // delivered meanwhile
          this.committedId = e.id;
          this.deliver(e);
        }
        if (theirs.length < page.length || page.length < 1000) break;
      }
      if (own) this.deliverOwn(own);
    };
    const previous = this.catchingUp ?? Promise.resolve();
    const next = previous.then(run, run).catch(() => {
      // the store could not be read (a lost connection): our own events are committed, their
      // publishers resolve; everything after our cursor is read again shortly (or at the next NOTIFY)
      if (own) for (const p of own) p.resolve(p.event);
      if (!this.closed) setTimeout(() => !this.closed && this.catchUp(), 500).unref();
    });
    this.catchingUp = next;
    void next.finally(() => {
      if (this.catchingUp === next) this.catchingUp = undefined;
    });
  }

  private deliver(event: BusEvent): void {
    for (const listener of this.listeners) listener(event);
    const typed = this.typed.get(event.type);
    if (typed) for (const listener of typed) listener(event);
  }

  /** In-process reaction to committed events of one type (or all with "*"). Returns an unsubscribe. */
  on<T extends EventType>(type: T | "*", handler: (event: BusEvent<T>) => void): () => void {
    const safe: Listener = (e) => {
      try {
        handler(e as BusEvent<T>);
      } catch (err) {
        queueMicrotask(() => {
          throw err;
        });
      }
    };
    if (type === "*") {
      this.listeners.add(safe);
      return () => this.listeners.delete(safe);
    }
    let set = this.typed.get(type);
    if (!set) this.typed.set(type, (set = new Set()));
    set.add(safe);
    return () => set.delete(safe);
  }

  /**
   * Every event after `afterId`, then live ones, with no gap and no duplicate: the live listener is
   * attached first, the backlog read from the store, and anything at or below the cursor skipped.
   * A subscriber that falls behind by more than `highWaterMark` live events drops its buffer and
   * reads the store from its cursor instead, so memory stays bounded.
   */
  async *subscribe(options: SubscribeOptions = {}): AsyncGenerator<BusEvent, void, undefined> {
    for await (const batch of this.subscribeBatches(options)) yield* batch;
  }

  /** As `subscribe`, in batches of up to `maxBatch` events: what a store page or a commit holds. */
  async *subscribeBatches(options: SubscribeOptions & { maxBatch?: number } = {}): AsyncGenerator<BusEvent[], void, undefined> {
    const { scope, signal } = options;
    const highWaterMark = options.highWaterMark ?? 10_000;
    const maxBatch = options.maxBatch ?? 1000;
    const key = scope ? scopeKey[scope.kind] : undefined;
    let cursor = options.afterId ?? 0;
    const queue = new EventQueue();
    let overflowed = false;
    let wake: (() => void) | undefined;
    const wakeUp = () => {
      const w = wake;
      wake = undefined;
      w?.();
    };
    const listener: Listener = (event) => {
      if ((key && event.scope[key] !== scope!.id) || overflowed) return;
      if (queue.size >= highWaterMark) {
        overflowed = true;
        queue.clear();
      } else {
        queue.push(event);
      }
      wakeUp();
    };
    this.listeners.add(listener);
    this.wakers.add(wakeUp);
    signal?.addEventListener("abort", wakeUp, { once: true });
    try {
      let fromStore = true;
      while (!signal?.aborted && !this.closed) {
        if (fromStore) {
          queue.clear();
          await this.ready;
          const page = await this.store.readAfter(cursor, scope, maxBatch);
          if (page.length === 0) {
            fromStore = false;
            overflowed = false;
            continue;
          }
          cursor = page[page.length - 1]!.id;
          yield page;
          continue;
        }
        const batch = queue.drain(maxBatch, cursor);
        if (batch.length > 0) {
          cursor = batch[batch.length - 1]!.id;
          yield batch;
        }
        if (overflowed) {
          fromStore = true;
          continue;
        }
        if (queue.size === 0 && !signal?.aborted && !this.closed) {
          await new Promise<void>((resolve) => (wake = resolve));
        }
      }
    } finally {
      this.listeners.delete(listener);
      this.wakers.delete(wakeUp);
      signal?.removeEventListener("abort", wakeUp);
    }
  }

  /** Commit what is pending and stop accepting events; live subscribers end. */
  close(): void {
    if (this.closed) return;
    this.flush();
    this.closed = true;
    for (const wake of [...this.wakers]) wake();
    const unwatch = this.unwatch;
    this.unwatch = undefined;
    void unwatch?.().catch(() => undefined);
  }

  /** Resolves once every commit under way is done and delivered (a shared store's shutdown). */
  async drain(): Promise<void> {
    while (this.committing || this.catchingUp) await (this.committing ?? this.catchingUp);
  }
}

/** FIFO with O(1) shift. */
class EventQueue {
  private items: BusEvent[] = [];
  private head = 0;

  get size(): number {
    return this.items.length - this.head;
  }

  push(e: BusEvent): void {
    this.items.push(e);
  }

  clear(): void {
    this.items = [];
    this.head = 0;
  }

  /** Take up to `max` events, skipping any at or below `afterId`. */
  drain(max: number, afterId: number): BusEvent[] {
    const out: BusEvent[] = [];
    while (out.length < max && this.head < this.items.length) {
      const e = this.items[this.head++]!;
      if (e.id > afterId) out.push(e);
    }
    if (this.head >= this.items.length) this.clear();
    else if (this.head > 1024 && this.head * 2 > this.items.length) {
      this.items = this.items.slice(this.head);
      this.head = 0;
    }
    return out;
  }
}
