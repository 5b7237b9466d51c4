import { and, count, eq, inArray } from "drizzle-orm";
import type { AgentApproval } from "../../shared/agents";
import { uuidv7 } from "../daemons/uuidv7";
import type { Db } from "../db/client";
import { DomainError } from "../errors";
import type { EventBus } from "../events/bus";
import { agentApprovals } from "./agents.sql";

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

/**
 * Tool approvals of agents in `ask` mode. A request waits for a human for as long as it takes:
 * nothing is denied on a timeout. When the agent's process ends (or the server restarts, which
 * breaks the CLI's waiting connection), its open requests are marked `expired`, not denied.
 */
export class AgentApprovals {
  private readonly waiters = new Map<string, (d: ApprovalDecision) => void>();

  constructor(
    private readonly db: Db,
    private readonly bus: EventBus,
  ) {}

  async request(agentId: string, toolName: string, input: unknown): Promise<ApprovalDecision> {
    const id = `appr_${uuidv7()}`;
    this.db.insert(agentApprovals).values({ id, agentId, toolName, input: JSON.stringify(input ?? null), status: "pending", createdAt: Date.now() }).run();
    const decided = new Promise<ApprovalDecision>((resolve) => this.waiters.set(id, resolve));
    await this.bus.publish("agent.approval_requested", { approvalId: id, toolName, input }, { agentId });
    return decided;
  }

  list(filter: { agentId?: string; status?: AgentApproval["status"] } = {}): AgentApproval[] {
    const conds = [filter.agentId ? eq(agentApprovals.agentId, filter.agentId) : undefined, filter.status ? eq(agentApprovals.status, filter.status) : undefined].filter(
      (c) => c !== undefined,
    );
    return this.db
      .select()
      .from(agentApprovals)
      .where(conds.length ? and(...conds) : undefined)
      .all()
      .sort((a, b) => a.createdAt - b.createdAt)
      .map(toApproval);
  }

  /** Pending approvals per agent, in one query (of the given agents, else of all). */
  pendingCounts(agentIds?: readonly string[]): Map<string, number> {
    const pending = eq(agentApprovals.status, "pending");
    const rows = this.db
      .select({ agentId: agentApprovals.agentId, n: count() })
      .from(agentApprovals)
      .where(agentIds ? and(pending, inArray(agentApprovals.agentId, [...agentIds])) : pending)
      .groupBy(agentApprovals.agentId)
      .all();
    return new Map(rows.map((r) => [r.agentId, r.n]));
  }

  async decide(approvalId: string, decision: { allow: boolean; message?: string; updatedInput?: unknown }): Promise<AgentApproval> {
    const row = this.db.select().from(agentApprovals).where(eq(agentApprovals.id, approvalId)).get();
    if (!row) throw new DomainError("APPROVAL_NOT_FOUND", `No approval "${approvalId}"`, { kind: "NOT_FOUND" });
    if (row.status !== "pending") throw new DomainError("APPROVAL_NOT_PENDING", `Approval ${approvalId} is already ${row.status}`, { kind: "CONFLICT" });
    const status = decision.allow ? "allowed" : "denied";
    const message = decision.allow ? null : (decision.message ?? "denied by a user");
    this.db.update(agentApprovals).set({ status, message, decidedAt: Date.now() }).where(eq(agentApprovals.id, approvalId)).run();
    await this.bus.publish("agent.approval_decided", { approvalId, status, message }, { agentId: row.agentId });
    const waiter = this.waiters.get(approvalId);
    this.waiters.delete(approvalId);
    const input = decision.updatedInput ?? JSON.parse(row.input);
    waiter?.(decision.allow ? { behavior: "allow", updatedInput: input } : { behavior: "deny", message: message! });
    return toApproval(this.db.select().from(agentApprovals).where(eq(agentApprovals.id, approvalId)).get()!);
  }

  async expireFor(agentId: string, why: string): Promise<void> {
    for (const a of this.list({ agentId, status: "pending" })) await this.expire(a.id, a.agentId, why);
  }

  async expireAll(why: string): Promise<void> {
    for (const a of this.list({ status: "pending" })) await this.expire(a.id, a.agentId, why);
  }

  private async expire(id: string, agentId: string, why: string): Promise<void> {
    this.db.update(agentApprovals).set({ status: "expired", message: why, decidedAt: Date.now() }).where(eq(agentApprovals.id, id)).run();
    const waiter = this.waiters.get(id);
    this.waiters.delete(id);
    waiter?.({ behavior: "deny", message: why });
    await this.bus.publish("agent.approval_decided", { approvalId: id, status: "expired", message: why }, { agentId });
  }
}
