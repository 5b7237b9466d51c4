import { and, asc, count, eq, inArray, isNull, sql } from "drizzle-orm";
import type { QueuedMessage } from "../../shared/agents";
import { first, type ReadDb, type Store, type TxDb } from "../db/store";
import { DomainError } from "../errors";
import { uuidv7 } from "../lib/uuidv7";
import type { agentMessages } from "./agents.sql";
import { LIVE_STATUSES } from "./agent-records";

export type AgentMessageRow = typeof agentMessages.$inferSelect;

/** Thrown inside a transaction: the agent is not live any more, so a follow-up is delivered now instead. */
export class AgentNotLive extends DomainError<"AGENT_NOT_LIVE"> {
  constructor(status: string) {
    super("AGENT_NOT_LIVE", `The agent is ${status}: the follow-up is delivered now instead of queued`, { kind: "CONFLICT" });
  }
}

/** Thrown inside a transaction: follow-ups wait, so the agent does not go idle (they are delivered). */
export class UndeliveredFollowUps extends DomainError<"AGENT_FOLLOW_UPS_PENDING"> {
  constructor(count: number) {
    super("AGENT_FOLLOW_UPS_PENDING", `${count} follow-up(s) wait for delivery`, { kind: "CONFLICT" });
  }
}

/**
 * Follow-ups as rows (`agent_messages`): written only while the agent is live, delivered in order
 * exactly once (marked in the transaction of the run that carries them). The writes take the
 * transaction they belong to (the bus's, `PublishOptions.write`, or a lifecycle move's).
 *
 * Why no follow-up is stranded, on either store: queuing one first writes the agent's row on the
 * condition that it is live, and a move to idle first writes the row too (its compare-and-set),
 * then counts what waits. On SQLite one transaction runs at a time; on PostgreSQL the first of the
 * two to write the row holds it until it commits, and the other then sees what it did (READ
 * COMMITTED: each statement reads what was committed before it began): the queued row, so the
 * agent does not go idle, or an agent no longer live, so the follow-up is delivered now.
 */
export class AgentMessages {
  constructor(private readonly store: Store) {}

  private get t() {
    return this.store.t;
  }

  /** Queue a follow-up if the agent is live (else AgentNotLive): the row and the seq in one go. */
  async enqueueIfLive(tx: TxDb, agentId: string, text: string, id = `msg_${uuidv7()}`): Promise<AgentMessageRow> {
    const { agents, agentMessages } = this.t;
    const live = await tx
      .update(agents)
      .set({ updatedAt: Date.now() })
      .where(and(eq(agents.id, agentId), inArray(agents.status, [...LIVE_STATUSES])))
      .returning({ id: agents.id });
    if (live.length === 0) {
      const agent = await first(tx.select({ status: agents.status }).from(agents).where(eq(agents.id, agentId)));
      throw new AgentNotLive(agent?.status ?? "gone");
    }
    const next = await first(
      tx
        .select({ seq: sql<number>`coalesce(max(${agentMessages.seq}), 0) + 1`.mapWith(Number) })
        .from(agentMessages)
        .where(eq(agentMessages.agentId, agentId)),
    );
    const row = { id, agentId, seq: next!.seq, text, createdAt: Date.now(), deliveredAt: null };
    await tx.insert(agentMessages).values(row);
    return row;
  }

  /** Undelivered follow-ups of one agent, oldest first. */
  undelivered(agentId: string, db: ReadDb = this.store.read): Promise<AgentMessageRow[]> {
    const { agentMessages } = this.t;
    return db
      .select()
      .from(agentMessages)
      .where(and(eq(agentMessages.agentId, agentId), isNull(agentMessages.deliveredAt)))
      .orderBy(asc(agentMessages.seq));
  }

  /** Refuse (UndeliveredFollowUps) while any follow-up of the agent waits: the guard of `finished`. */
  async assertNoneWaiting(tx: TxDb, agentId: string): Promise<void> {
    const { agentMessages } = this.t;
    const waiting = await first(
      tx
        .select({ n: count() })
        .from(agentMessages)
        .where(and(eq(agentMessages.agentId, agentId), isNull(agentMessages.deliveredAt))),
    );
    const n = waiting?.n ?? 0;
    if (n > 0) throw new UndeliveredFollowUps(n);
  }

  /** Mark follow-ups delivered; throws when one of them already was (never delivered twice). */
  async markDelivered(tx: TxDb, ids: readonly string[]): Promise<void> {
    if (ids.length === 0) return;
    const { agentMessages } = this.t;
    const marked = await tx
      .update(agentMessages)
      .set({ deliveredAt: Date.now() })
      .where(and(inArray(agentMessages.id, [...ids]), isNull(agentMessages.deliveredAt)))
      .returning({ id: agentMessages.id });
    if (marked.length !== ids.length) throw new DomainError("AGENT_FOLLOW_UPS_TAKEN", "These follow-ups were delivered meanwhile", { kind: "CONFLICT" });
  }

  /** Undelivered follow-ups of every agent, as AgentInfo shows them (one query for a list). */
  async queuedByAgent(agentIds?: readonly string[]): Promise<Map<string, QueuedMessage[]>> {
    const { agentMessages } = this.t;
    const where = agentIds ? and(isNull(agentMessages.deliveredAt), inArray(agentMessages.agentId, [...agentIds])) : isNull(agentMessages.deliveredAt);
    const out = new Map<string, QueuedMessage[]>();
    for (const m of await this.store.read.select().from(agentMessages).where(where).orderBy(asc(agentMessages.agentId), asc(agentMessages.seq))) {
      const list = out.get(m.agentId) ?? [];
      list.push({ id: m.id, text: m.text, queuedAt: new Date(m.createdAt).toISOString() });
      out.set(m.agentId, list);
    }
    return out;
  }

  /** Follow-ups stored the old way (a JSON column) become rows, once, whatever the agent's status. */
  async importLegacy(agentId: string, messages: readonly QueuedMessage[]): Promise<void> {
    const { agentMessages } = this.t;
    await this.store.tx(async (tx) => {
      const top = await first(
        tx
          .select({ seq: sql<number>`coalesce(max(${agentMessages.seq}), 0)`.mapWith(Number) })
          .from(agentMessages)
          .where(eq(agentMessages.agentId, agentId)),
      );
      let seq = top?.seq ?? 0;
      for (const m of messages) {
        const at = Date.parse(m.queuedAt);
        await tx
          .insert(agentMessages)
          .values({ id: m.id, agentId, seq: ++seq, text: m.text, createdAt: Number.isFinite(at) ? at : Date.now(), deliveredAt: null })
          .onConflictDoNothing();
      }
    });
  }

  async forget(agentId: string): Promise<void> {
    const { agentMessages } = this.t;
    await this.store.tx(async (tx) => {
      await tx.delete(agentMessages).where(eq(agentMessages.agentId, agentId));
    });
  }
}
