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

  async get(idOrAlias: string): Promise<AgentInfo> {
    return this.info(await this.records.get(idOrAlias));
  }

  async list(filter: AgentFilter = {}): Promise<AgentInfo[]> {
    const [rows, labels, pending, queued] = await Promise.all([this.records.all(), this.labels(), this.approvals.pendingCounts(), this.messages.queuedByAgent()]);
    return rows
      .filter((r) => (!filter.status || filter.status.includes(r.status)) && (!filter.taskId || r.taskId === filter.taskId) && (!filter.phaseId || r.phaseId === filter.phaseId))
      .sort((a, b) => b.createdAt - a.createdAt)
      .map((r) => this.infoOf(r, labels, pending, queued));
  }

  /** Live agents running on an account (and the ones waiting for a human on it). */
  activeOnAccount(accountId: string): Promise<number> {
    return this.records.countOnAccount(accountId, [...LIVE_STATUSES, "waiting_for_input"]);
  }

  private async labels(): Promise<Map<string, string>> {
    return (await this.accounts?.labels()) ?? new Map<string, string>();
  }

  private async info(row: AgentRow): Promise<AgentInfo> {
    const [labels, pending, queued] = await Promise.all([row.accountId ? this.labels() : new Map<string, string>(), this.approvals.pendingCounts([row.id]), this.messages.queuedByAgent([row.id])]);
    return this.infoOf(row, labels, pending, queued);
  }

  private infoOf(row: AgentRow, labels: Map<string, string>, pending: Map<string, number>, queued: Map<string, QueuedMessage[]>): AgentInfo {
    const accountLabel = row.accountId ? (labels.get(row.accountId) ?? null) : null;
    return { ...toAgentInfo(row, pending.get(row.id) ?? 0, queued.get(row.id) ?? []), accountLabel };
  }
}
