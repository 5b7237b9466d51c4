/** A message of a `tracked()` subscription, as tRPC delivers it: its id (an event id) and its data. */
export type TrackedMessage<T> = { id: string; data: T };

/**
 * The pure part of useTrackedSubscription: drops a message whose id is not after the last one
 * taken (a repeat after a reconnect: ids are event ids, delivered in ascending order), and hands
 * the rest over in batches, at most one per `flushMs` (a replay or a flood of thousands of events
 * a second is one render per batch, not one per event).
 */
export class TrackedBatcher<T> {
  private lastId = 0;
  private pending: T[] = [];
  private timer: ReturnType<typeof setTimeout> | null = null;

  constructor(
    private readonly deliver: (batch: T[]) => void,
    private readonly flushMs: number,
  ) {}

  /** The id of the newest message taken (0 before the first). */
  get lastEventId(): number {
    return this.lastId;
  }

  /** Queue a message for the next batch; false when it repeats one already taken. */
  push(message: TrackedMessage<T>): boolean {
    const id = Number(message.id);
    if (Number.isFinite(id)) {
      if (id <= this.lastId) return false;
      this.lastId = id;
    }
    this.pending.push(message.data);
    this.timer ??= setTimeout(() => this.flush(), this.flushMs);
    return true;
  }

  /** Deliver what is queued now (the timer does this by itself). */
  flush(): void {
    if (this.timer !== null) clearTimeout(this.timer);
    this.timer = null;
    const batch = this.pending;
    if (batch.length === 0) return;
    this.pending = [];
    this.deliver(batch);
  }

  /** Forget everything: a new stream (another input) starts from scratch, an unmount leaves no timer. */
  reset(): void {
    if (this.timer !== null) clearTimeout(this.timer);
    this.timer = null;
    this.pending = [];
    this.lastId = 0;
  }
}
