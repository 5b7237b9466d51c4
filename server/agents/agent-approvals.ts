import { and, count, eq, inArray } from "drizzle-orm";
import type { AgentApproval } from "../../shared/agents";
import { uuidv7 } from "../lib/uuidv7";
import { first, type Store, type TxDb } from "../db/store";
import { DomainError } from "../errors";
import type { EventBus } from "../events/bus";
import type { agentApprovals } from "./agents.sql";

export type ApprovalDecision = { behavior: "allow"; updatedInput: unknown } | { behavior: "deny"; message: string };

type Row = typeof agentApprovals.$inferSelect;

function toApproval(r: Row): AgentApproval {
  let input: unknown = null;
  try {
    input = JSON.parse(r.input);
  } catch {
    input = r.input;
  }
  return {
    id: r.id,
    agentId: r.agentId,
    toolName: r.toolName,
    input,
    status: r.status,
    message: r.message,
    createdAt: new Date(r.createdAt).toISOString(),
    decidedAt: r.decidedAt === null ? null : new Date(r.decidedAt).toISOString(),
  };
}

/** Thrown inside an event's write: the approval was decided (or expired) meanwhile. */
class NotPending extends DomainError<"APPROVAL_NOT_PENDING"> {
  constructor(approvalId: string, status: string) {
    super("APPROVAL_NOT_PENDING", `Approval ${approvalId} is already ${status}`, { kind: "CONFLICT" });
  }
}

/**
 * Tool approvals of agents in `ask` mode. A request waits for a human for as long as it takes:
 * nothing is denied on a timeout. When the agent's process ends (or the server restarts, which
 * breaks the CLI's waiting connection), its open requests are marked `expired`, not denied. A
 * request's row and a decision's are written with their events; a decision only while the
 * request is still pending (a compare-and-set: one decision wins, on either store).
 */
export class AgentApprovals {
  private readonly waiters = new Map<string, (d: ApprovalDecision) => void>();

  constructor(
    private readonly store: Store,
    private readonly bus: EventBus,
  ) {
    // a decision made on another server of the database reaches the waiting request here
    bus.on("agent.approval_decided", (e) => this.decidedElsewhere(e.payload.approvalId, e.payload.status, e.payload.message ?? undefined));
  }

  /** The inputs of the requests waiting here, to allow them as they were asked when decided elsewhere. */
  private readonly inputs = new Map<string, unknown>();

  private decidedElsewhere(approvalId: string, status: string, message: string | undefined): void {
    const waiter = this.waiters.get(approvalId);
    if (!waiter) return;
    this.waiters.delete(approvalId);
    const input = this.inputs.get(approvalId);
    this.inputs.delete(approvalId);
    if (status === "allowed") waiter({ behavior: "allow", updatedInput: input });
    else waiter({ behavior: "deny", message: message ?? (status === "expired" ? "the request expired" : "denied by a user") });
  }

  private get t() {
    return this.store.t.agentApprovals;
  }

  async request(agentId: string, toolName: string, input: unknown): Promise<ApprovalDecision> {
    const id = `appr_${uuidv7()}`;
    const row = { id, agentId, toolName, input: JSON.stringify(input ?? null), status: "pending" as const, createdAt: Date.now() };
    const decided = new Promise<ApprovalDecision>((resolve) => this.waiters.set(id, resolve));
    this.inputs.set(id, input ?? null);
    try {
      await this.bus.publish("agent.approval_requested", { approvalId: id, toolName, input }, { agentId }, { write: async (tx) => void (await tx.insert(this.t).values(row)) });
    } catch (err) {
      this.waiters.delete(id);
      this.inputs.delete(id);
      throw err;
    }
    return decided;
  }

  async list(filter: { agentId?: string; status?: AgentApproval["status"] } = {}): Promise<AgentApproval[]> {
    const conds = [filter.agentId ? eq(this.t.agentId, filter.agentId) : undefined, filter.status ? eq(this.t.status, filter.status) : undefined].filter((c) => c !== undefined);
    const rows = await this.store.read
      .select()
      .from(this.t)
      .where(conds.length ? and(...conds) : undefined);
    return rows.sort((a, b) => a.createdAt - b.createdAt).map(toApproval);
  }

  /** Pending approvals per agent, in one query (of the given agents, else of all). */
  async pendingCounts(agentIds?: readonly string[]): Promise<Map<string, number>> {
    const pending = eq(this.t.status, "pending");
    const rows = await this.store.read
      .select({ agentId: this.t.agentId, n: count() })
      .from(this.t)
      .where(agentIds ? and(pending, inArray(this.t.agentId, [...agentIds])) : pending)
      .groupBy(this.t.agentId);
    return new Map(rows.map((r) => [r.agentId, r.n]));
  }

  async decide(approvalId: string, decision: { allow: boolean; message?: string; updatedInput?: unknown }): Promise<AgentApproval> {
    const row = await first(this.store.read.select().from(this.t).where(eq(this.t.id, approvalId)));
    if (!row) throw new DomainError("APPROVAL_NOT_FOUND", `No approval "${approvalId}"`, { kind: "NOT_FOUND" });
    if (row.status !== "pending") throw new NotPending(approvalId, row.status);
    const status = decision.allow ? "allowed" : "denied";
    const message = decision.allow ? null : (decision.message ?? "denied by a user");
    let written: Row | undefined;
    // decided here: the waiter is taken before the event is delivered (with the updated input)
    const waiter = this.waiters.get(approvalId);
    this.waiters.delete(approvalId);
    this.inputs.delete(approvalId);
    try {
      await this.bus.publish("agent.approval_decided", { approvalId, status, message }, { agentId: row.agentId }, { write: async (tx) => void (written = await this.settle(tx, approvalId, { status, message })) });
    } catch (err) {
      if (waiter) this.waiters.set(approvalId, waiter);
      throw err;
    }
    const input = decision.updatedInput ?? JSON.parse(row.input);
    waiter?.(decision.allow ? { behavior: "allow", updatedInput: input } : { behavior: "deny", message: message! });
    return toApproval(written!);
  }

  async expireFor(agentId: string, why: string): Promise<void> {
    for (const a of await this.list({ agentId, status: "pending" })) await this.expire(a.id, a.agentId, why);
  }

  async expireAll(why: string): Promise<void> {
    for (const a of await this.list({ status: "pending" })) await this.expire(a.id, a.agentId, why);
  }

  /** Expire one agent's pending requests (its server restarted, or another server took it over). */
  async expirePendingOf(agentId: string, why: string): Promise<void> {
    for (const a of await this.list({ status: "pending" })) if (a.agentId === agentId) await this.expire(a.id, a.agentId, why);
  }

  /** Expire a request still pending (one decided meanwhile stays as decided, with no event). */
  private async expire(id: string, agentId: string, why: string): Promise<void> {
    try {
      await this.bus.publish("agent.approval_decided", { approvalId: id, status: "expired", message: why }, { agentId }, { write: async (tx) => void (await this.settle(tx, id, { status: "expired", message: why })) });
    } catch (err) {
      if (err instanceof NotPending) return;
      throw err;
    }
    const waiter = this.waiters.get(id);
    this.waiters.delete(id);
    waiter?.({ behavior: "deny", message: why });
  }

  /** The decision, only while the request is pending (else NotPending, and nothing is written). */
  private async settle(tx: TxDb, id: string, set: { status: Exclude<Row["status"], "pending">; message: string | null }): Promise<Row> {
    const [written] = await tx
      .update(this.t)
      .set({ ...set, decidedAt: Date.now() })
      .where(and(eq(this.t.id, id), eq(this.t.status, "pending")))
      .returning();
    if (written) return written;
    const now = await first(tx.select({ status: this.t.status }).from(this.t).where(eq(this.t.id, id)));
    throw new NotPending(id, now?.status ?? "gone");
  }
}
