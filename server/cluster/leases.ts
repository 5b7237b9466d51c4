import { and, eq, lt, or, sql } from "drizzle-orm";
import { first, type Store, type TxDb } from "../db/store";
import { leaseLost, type EventFence } from "../events/event-store";

/** What a server can own: a strategy run, a daemon, or a CLI agent's running process (the server that watches it). */
export type LeaseKind = "run" | "daemon" | "agent";

/** Renewed this often by the owner. */
export const LEASE_RENEW_MS = 2_000;
/** Lost this long after the last renewal: another server may take it over. */
export const LEASE_TTL_MS = 10_000;

export type LeaseCode = "LEASE_LOST";

/** How long a lease lost to another server keeps refusing this server's writes for it. */
const FORFEIT_KEPT_MS = 5 * 60_000;

const key = (kind: LeaseKind, id: string) => `${kind}:${id}`;

/**
 * This server's leases (one `leases` row per owned run or daemon). `acquire` takes a lease that is
 * free, expired, or this server's own from an earlier life (same server id: a restart recovers
 * at once); each take bumps the epoch. `fence(tx, ...)` is the owner's check inside a write's
 * transaction: a conditional UPDATE of its own row at its epoch, which also holds that row's lock
 * until the write commits, so a takeover (an UPDATE of the same row) waits for the write and a
 * write after a takeover is refused (LEASE_LOST).
 */
export class LeaseBook {
  /** kind:id -> epoch of what this server holds. */
  private readonly held = new Map<string, { kind: LeaseKind; id: string; epoch: number }>();
  /**
   * kind:id -> the epoch this server held before another server took it over (found at a
   * renewal), and when: its writes stay refused until it takes the lease again; forgotten after
   * FORFEIT_KEPT_MS (what ran under it has stopped long before).
   */
  private readonly forfeited = new Map<string, { epoch: number; at: number }>();

  constructor(
    private readonly store: Store,
    readonly serverId: string,
    private readonly ttlMs = LEASE_TTL_MS,
    private readonly now: () => number = Date.now,
  ) {}

  /** The epoch this server holds for it, if any. */
  epochOf(kind: LeaseKind, id: string): number | undefined {
    return this.held.get(key(kind, id))?.epoch;
  }

  holds(kind: LeaseKind, id: string): boolean {
    return this.held.has(key(kind, id));
  }

  /**
   * The fence for the events this server publishes as the owner (see EventFence): the epoch it
   * holds, or the one it lost (so they are refused); none for what it never took.
   */
  fenceOf(kind: LeaseKind, id: string): EventFence | undefined {
    const k = key(kind, id);
    const epoch = this.held.get(k)?.epoch ?? this.forfeited.get(k)?.epoch;
    return epoch === undefined ? undefined : { kind, id, epoch, serverId: this.serverId };
  }

  /** Take the lease if it is free, expired or ours from before; its new epoch, or undefined when another server holds it. */
  async acquire(kind: LeaseKind, id: string, opts: { takeover?: boolean; skipHeld?: boolean } = {}): Promise<number | undefined> {
    const mine = this.held.get(key(kind, id));
    // a scan never takes what this server already holds: it is running (or ending) here
    if (mine) return opts.skipHeld || opts.takeover ? undefined : mine.epoch;
    const { leases } = this.store.t;
    const now = this.now();
    const free = or(lt(leases.expiresAt, now), eq(leases.serverId, this.serverId));
    // a takeover takes only a lease that exists (whose owner may still be creating it otherwise)
    const rows = await this.store.tx(async (tx) => {
      // a fenced event of the owner before commits before this, one after sees the new epoch
      await this.store.events.holdAppends?.(tx);
      return opts.takeover
        ? tx
            .update(leases)
            .set({ serverId: this.serverId, epoch: sql`${leases.epoch} + 1`, expiresAt: now + this.ttlMs })
            .where(and(eq(leases.kind, kind), eq(leases.entityId, id), free))
            .returning({ epoch: leases.epoch })
        : tx
        .insert(leases)
        .values({ kind, entityId: id, serverId: this.serverId, epoch: 1, expiresAt: now + this.ttlMs })
        .onConflictDoUpdate({
          target: [leases.kind, leases.entityId],
          set: { serverId: this.serverId, epoch: sql`${leases.epoch} + 1`, expiresAt: now + this.ttlMs },
          setWhere: free,
        })
        .returning({ epoch: leases.epoch });
    });
    const epoch = rows[0]?.epoch;
    if (epoch === undefined) return undefined;
    this.held.set(key(kind, id), { kind, id, epoch });
    this.forfeited.delete(key(kind, id));
    return epoch;
  }

  /**
   * Inside a write's transaction: refuse the write unless this server still holds the lease at
   * the epoch it took (LEASE_LOST). A kind/id this server never took passes (nothing to fence).
   */
  async fence(tx: TxDb, kind: LeaseKind, id: string): Promise<void> {
    const mine = this.held.get(key(kind, id));
    if (!mine) {
      if (this.forfeited.has(key(kind, id))) throw leaseLost(kind, id, "its write");
      return;
    }
    const { leases } = this.store.t;
    const rows = await tx
      .update(leases)
      .set({ expiresAt: sql`${leases.expiresAt}` })
      .where(and(eq(leases.kind, kind), eq(leases.entityId, id), eq(leases.serverId, this.serverId), eq(leases.epoch, mine.epoch)))
      .returning({ epoch: leases.epoch });
    if (rows.length === 0) throw leaseLost(kind, id, "its write");
  }

  /** Let a lease go (the run or daemon ended here). */
  async release(kind: LeaseKind, id: string): Promise<void> {
    const mine = this.held.get(key(kind, id));
    if (!mine) return;
    this.held.delete(key(kind, id));
    const { leases } = this.store.t;
    await this.store.tx((tx) => tx.delete(leases).where(and(eq(leases.kind, kind), eq(leases.entityId, id), eq(leases.serverId, this.serverId), eq(leases.epoch, mine.epoch))));
  }

  /**
   * Renew every lease this server holds; what it no longer holds (another server took it after
   * it expired, e.g. after a long pause or a cut network) is forgotten and returned.
   */
  async renew(): Promise<Array<{ kind: LeaseKind; id: string }>> {
    const { leases } = this.store.t;
    // only what was held before the UPDATE can be missing from its answer: a lease taken while it
    // ran (its row committed after the UPDATE's snapshot) is not lost
    const before = new Map(this.held);
    const rows = await this.store.tx((tx) =>
      tx
        .update(leases)
        .set({ expiresAt: this.now() + this.ttlMs })
        .where(eq(leases.serverId, this.serverId))
        .returning({ kind: leases.kind, entityId: leases.entityId, epoch: leases.epoch }),
    );
    const still = new Set(rows.map((r) => `${key(r.kind as LeaseKind, r.entityId)}@${r.epoch}`));
    const lostOnes: Array<{ kind: LeaseKind; id: string }> = [];
    const now = this.now();
    for (const [k, l] of before) {
      // released or taken again meanwhile: not this renewal's to judge
      if (this.held.get(k) !== l || still.has(`${k}@${l.epoch}`)) continue;
      this.held.delete(k);
      this.forfeited.set(k, { epoch: l.epoch, at: now });
      lostOnes.push({ kind: l.kind, id: l.id });
    }
    for (const [k, f] of this.forfeited) if (now - f.at > FORFEIT_KEPT_MS) this.forfeited.delete(k);
    return lostOnes;
  }

  /** On a graceful stop: every lease expires now, so another server takes over at once. */
  async expireAll(): Promise<void> {
    const { leases } = this.store.t;
    this.held.clear();
    await this.store.tx((tx) => tx.update(leases).set({ expiresAt: 0 }).where(eq(leases.serverId, this.serverId)));
  }

  /** The server holding a live lease on it, when that is another server. */
  async remoteOwner(kind: LeaseKind, id: string): Promise<string | undefined> {
    if (this.holds(kind, id)) return undefined;
    const { leases } = this.store.t;
    const row = await first(this.store.read.select().from(leases).where(and(eq(leases.kind, kind), eq(leases.entityId, id))));
    if (!row || row.serverId === this.serverId || row.expiresAt < this.now()) return undefined;
    return row.serverId;
  }
}
