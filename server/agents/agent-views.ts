import type { AgentInfo, QueuedMessage } from "../../shared/agents";
import type { AccountsService } from "../accounts/accounts.service";
import type { AgentApprovals } from "./agent-approvals";
import type { AgentMessages } from "./agent-messages";
import { LIVE_STATUSES, toAgentInfo, type AgentRecords, type AgentRow } from "./agent-records";

export type AgentFilter = { status?: AgentInfo["status"][]; taskId?: string; phaseId?: string };

/** The read side: agents as clients see them (with their account, approvals and follow-ups waiting). */
export class AgentViews {
  constructor(
    private readonly records: AgentRecords,
    private readonly approvals: AgentApprovals,
    private readonly messages: AgentMessages,
    private readonly accounts: AccountsService | undefined,
  ) {}

  get(idOrAlias: string): AgentInfo {
    return this.info(this.records.get(idOrAlias));
  }

  list(filter: AgentFilter = {}): AgentInfo[] {
    const labels = this.accounts?.labels() ?? new Map<string, string>();
    const pending = this.approvals.pendingCounts();
    const queued = this.messages.queuedByAgent();
    return this.records
      .all()
      .filter((r) => (!filter.status || filter.status.includes(r.status)) && (!filter.taskId || r.taskId === filter.taskId) && (!filter.phaseId || r.phaseId === filter.phaseId))
      .sort((a, b) => b.createdAt - a.createdAt)
      .map((r) => this.info(r, labels, pending, queued));
  }

  /** Live agents running on an account (and the ones waiting for a human on it). */
  activeOnAccount(accountId: string): number {
    return this.records.all().filter((r) => r.accountId === accountId && (LIVE_STATUSES.includes(r.status) || r.status === "waiting_for_input")).length;
  }

  private info(row: AgentRow, labels?: Map<string, string>, pending?: Map<string, number>, queued?: Map<string, QueuedMessage[]>): AgentInfo {
    const accountLabel = row.accountId ? ((labels ?? this.accounts?.labels())?.get(row.accountId) ?? null) : null;
    const approvals = (pending ?? this.approvals.pendingCounts([row.id])).get(row.id) ?? 0;
    const messages = (queued ?? this.messages.queuedByAgent([row.id])).get(row.id) ?? [];
    return { ...toAgentInfo(row, approvals, messages), accountLabel };
  }
}
