import { and, count, eq, inArray, or, type SQL } from "drizzle-orm";
import type { AgentStatus } from "../../shared/statuses";
import { after, decodeCursor, newestFirst, pageRows } from "../db/keyset";
import type { Store } from "../db/store";
import { fromStored, type AgentRow } from "./agent-records";

/**
 * What an agents listing keeps. `status` and `needsYou` keep an agent that matches either (the
 * statuses as listed, "Needs you" among them); `ids`: only these agents (an agent's family).
 */
export type AgentFilter = { status?: readonly AgentStatus[]; needsYou?: boolean; taskId?: string; phaseId?: string; ids?: readonly string[] };

/**
 * The read side of the `agents` table for listings, on either store: pages newest first (keyset
 * on created_at, id; see server/db/keyset.ts) and the counts per status, under one filter.
 */
export class AgentListing {
  constructor(private readonly store: Store) {}

  /** One page of rows: `limit` at most (omitted: all), after `cursor`. */
  async page(filter: AgentFilter, limit?: number, cursor?: string | null): Promise<{ rows: AgentRow[]; nextCursor: string | null }> {
    const { agents } = this.store.t;
    const where = and(this.where(filter), cursor ? after(agents.createdAt, agents.id, decodeCursor(cursor)) : undefined);
    const q = this.store.read.select().from(agents).where(where).orderBy(...newestFirst(agents.createdAt, agents.id));
    const rows = limit === undefined ? await q : await q.limit(limit + 1);
    const page = pageRows(rows, limit, (r) => ({ at: r.createdAt, id: r.id }));
    return { rows: page.rows.map(fromStored), nextCursor: page.nextCursor };
  }

  /** How many agents the filter keeps (its status and needsYou ignored): in all, per status, and how many need a human. */
  async counts(filter: Omit<AgentFilter, "status" | "needsYou">): Promise<{ total: number; byStatus: Partial<Record<AgentStatus, number>>; needsYou: number }> {
    const { agents } = this.store.t;
    const [rows, needing] = await Promise.all([
      this.store.read.select({ status: agents.status, n: count() }).from(agents).where(this.where(filter)).groupBy(agents.status),
      this.store.read.select({ n: count() }).from(agents).where(this.where({ ...filter, needsYou: true })),
    ]);
    const byStatus: Partial<Record<AgentStatus, number>> = {};
    for (const r of rows) byStatus[r.status] = Number(r.n);
    return { total: rows.reduce((sum, r) => sum + Number(r.n), 0), byStatus, needsYou: Number(needing[0]?.n ?? 0) };
  }

  private where(filter: AgentFilter): SQL | undefined {
    const { agents } = this.store.t;
    const statuses = filter.status && filter.status.length > 0 ? inArray(agents.status, [...filter.status]) : undefined;
    return and(
      filter.needsYou ? or(statuses, this.needsYou()) : statuses,
      filter.taskId !== undefined ? eq(agents.taskId, filter.taskId) : undefined,
      filter.phaseId !== undefined ? eq(agents.phaseId, filter.phaseId) : undefined,
      filter.ids ? inArray(agents.id, [...filter.ids]) : undefined,
    );
  }

  /** Waiting for a human: questions asked, or a tool approval pending (AgentInfo.needsYou). */
  private needsYou(): SQL {
    const { agents, agentApprovals } = this.store.t;
    const approving = this.store.read.select({ agentId: agentApprovals.agentId }).from(agentApprovals).where(eq(agentApprovals.status, "pending"));
    return or(eq(agents.status, "waiting_for_input"), inArray(agents.id, approving))!;
  }
}
