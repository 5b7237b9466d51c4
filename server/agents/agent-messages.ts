import { and, asc, eq, inArray, isNull, sql } from "drizzle-orm";
import type { QueuedMessage } from "../../shared/agents";
import type { Db } from "../db/client";
import { DomainError } from "../errors";
import { uuidv7 } from "../daemons/uuidv7";
import { agentMessages, agents } from "./agents.sql";
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
 * exactly once (marked in the transaction of the run that carries them). Small synchronous
 * statements, meant to run inside the bus's transaction (`PublishOptions.write`).
 */
export class AgentMessages {
  constructor(private readonly db: Db) {}

  /** Queue a follow-up if the agent is live (else AgentNotLive): the row and the seq in one go. */
  enqueueIfLive(agentId: string, text: string, id = `msg_${uuidv7()}`): AgentMessageRow {
    const agent = this.db.select({ status: agents.status }).from(agents).where(eq(agents.id, agentId)).get();
    if (!agent || !LIVE_STATUSES.includes(agent.status)) throw new AgentNotLive(agent?.status ?? "gone");
    const next = this.db
      .select({ seq: sql<number>`coalesce(max(${agentMessages.seq}), 0) + 1` })
      .from(agentMessages)
      .where(eq(agentMessages.agentId, agentId))
      .get()!.seq;
    const row = { id, agentId, seq: next, text, createdAt: Date.now(), deliveredAt: null };
    this.db.insert(agentMessages).values(row).run();
    return row;
  }

  /** Undelivered follow-ups of one agent, oldest first. */
  undelivered(agentId: string): AgentMessageRow[] {
    return this.db.select().from(agentMessages).where(and(eq(agentMessages.agentId, agentId), isNull(agentMessages.deliveredAt))).orderBy(asc(agentMessages.seq)).all();
  }

  /** Refuse (UndeliveredFollowUps) while any follow-up of the agent waits: the guard of `finished`. */
  assertNoneWaiting(agentId: string): void {
    const n = this.db
      .select({ n: sql<number>`count(*)` })
      .from(agentMessages)
      .where(and(eq(agentMessages.agentId, agentId), isNull(agentMessages.deliveredAt)))
      .get()!.n;
    if (n > 0) throw new UndeliveredFollowUps(n);
  }

  /** Mark follow-ups delivered; throws when one of them already was (never delivered twice). */
  markDelivered(ids: readonly string[]): void {
    if (ids.length === 0) return;
    const r = this.db
      .update(agentMessages)
      .set({ deliveredAt: Date.now() })
      .where(and(inArray(agentMessages.id, [...ids]), isNull(agentMessages.deliveredAt)))
      .run();
    if (r.changes !== ids.length) throw new DomainError("AGENT_FOLLOW_UPS_TAKEN", "These follow-ups were delivered meanwhile", { kind: "CONFLICT" });
  }

  /** Undelivered follow-ups of every agent, as AgentInfo shows them (one query for a list). */
  queuedByAgent(agentIds?: readonly string[]): Map<string, QueuedMessage[]> {
    const where = agentIds ? and(isNull(agentMessages.deliveredAt), inArray(agentMessages.agentId, [...agentIds])) : isNull(agentMessages.deliveredAt);
    const out = new Map<string, QueuedMessage[]>();
    for (const m of this.db.select().from(agentMessages).where(where).orderBy(asc(agentMessages.agentId), asc(agentMessages.seq)).all()) {
      const list = out.get(m.agentId) ?? [];
      list.push({ id: m.id, text: m.text, queuedAt: new Date(m.createdAt).toISOString() });
      out.set(m.agentId, list);
    }
    return out;
  }

  /** Follow-ups stored the old way (a JSON column) become rows, once, whatever the agent's status. */
  importLegacy(agentId: string, messages: readonly QueuedMessage[]): void {
    let seq = this.db.select({ seq: sql<number>`coalesce(max(${agentMessages.seq}), 0)` }).from(agentMessages).where(eq(agentMessages.agentId, agentId)).get()!.seq;
    for (const m of messages) {
      const at = Date.parse(m.queuedAt);
      this.db.insert(agentMessages).values({ id: m.id, agentId, seq: ++seq, text: m.text, createdAt: Number.isFinite(at) ? at : Date.now(), deliveredAt: null }).onConflictDoNothing().run();
    }
  }

  forget(agentId: string): void {
    this.db.delete(agentMessages).where(eq(agentMessages.agentId, agentId)).run();
  }
}
