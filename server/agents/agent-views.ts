import type { ListPage } from "../../shared/api";
import type { AgentInfo, QueuedMessage } from "../../shared/agents";
import type { AccountsService } from "../accounts/accounts.service";
import type { Store } from "../db/store";
import type { AgentApprovals } from "./agent-approvals";
import { AgentListing, type AgentFilter } from "./agent-listing";
import type { AgentMessages } from "./agent-messages";
import { LIVE_STATUSES, toAgentInfo, type AgentRecords, type AgentRow } from "./agent-records";

export type { AgentFilter };

/** The read side: agents as clients see them (with their account, approvals and follow-ups waiting). */
export class AgentViews {
  private readonly listing: AgentListing;

  constructor(
    store: Store,
    private readonly records: AgentRecords,
    private readonly approvals: AgentApprovals,
    private readonly messages: AgentMessages,
    private readonly accounts: AccountsService | undefined,
  ) {
    this.listing = new AgentListing(store);
  }

  async get(idOrAlias: string): Promise<AgentInfo> {
    return this.info(await this.records.get(idOrAlias));
  }

  /** A page of agents, newest first (keyset: `cursor` is the `nextCursor` of the page before; no `limit`: all of them). */
  async list(filter: AgentFilter = {}, page: { limit?: number; cursor?: string | null } = {}): Promise<ListPage<AgentInfo>> {
    const { rows, nextCursor } = await this.listing.page(filter, page.limit, page.cursor);
    // a page asks for its own agents' approvals and follow-ups; the whole list for everyone's at once
    const ids = page.limit === undefined ? undefined : rows.map((r) => r.id);
    const [labels, pending, queued] = await Promise.all([this.labels(), this.approvals.pendingCounts(ids), this.messages.queuedByAgent(ids)]);
    return { items: rows.map((r) => this.infoOf(r, labels, pending, queued)), nextCursor };
  }

  /** How many agents the filter keeps, in all, per status, and needing a human. */
  counts(filter: Omit<AgentFilter, "status" | "needsYou"> = {}) {
    return this.listing.counts(filter);
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
