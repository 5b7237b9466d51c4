import { join } from "node:path";
import type { EventPayload, EventType } from "../../shared/events";
import type { AccountsService } from "../accounts/accounts.service";
import type { Config } from "../config";
import type { RowWrite } from "../db/store";
import { DomainError } from "../errors";
import type { EventBus } from "../events/bus";
import type { EventFence } from "../events/event-store";
import type { Logger } from "../log";
import type { AgentApprovals } from "./agent-approvals";
import type { AgentHost, AgentHosts } from "./agent-host";
import type { AgentLifecycle } from "./agent-lifecycle";
import type { AgentMessages } from "./agent-messages";
import type { AgentRecords, AgentRow } from "./agent-records";
import { getProvider } from "./providers";
import type { ProviderAdapter } from "./providers/types";
import type { Workspace } from "./workspace";

/** Where a new agent runs: this machine, a worker (with its connection's epoch), or nowhere yet (why). */
export type Placed = { worker: null } | { worker: string; epoch: number } | { queued: string };

export type AgentsConfig = Pick<
  Config,
  "home" | "secretKey" | "agentMaxDepth" | "agentMaxChildren" | "agentCleanup" | "agentAutocommit" | "agentResultGraceMs" | "agentSilenceMs" | "agentCommands" | "anthropicBaseUrl" | "openaiBaseUrl" | "anthropicApiKey" | "openaiApiKey"
>;

/**
 * What the parts of the agents domain share (the facade builds it once): the store's rows and
 * their one door for status changes, the host the agents run on, the bus.
 */
export interface AgentContext {
  bus: EventBus;
  log: Logger;
  config: AgentsConfig;
  /** The machines agents run on: this one, and the workers connected to this server. */
  hosts: AgentHosts;
  records: AgentRecords;
  messages: AgentMessages;
  lifecycle: AgentLifecycle;
  approvals: AgentApprovals;
  accounts: AccountsService | undefined;
  env: NodeJS.ProcessEnv;
  /** True once the server shuts down: nothing new starts. */
  closed(): boolean;
  /**
   * Own an agent's running process (its lease: free, expired, or this server's from before a
   * restart); false when another server of the database watches it. `release` when it ended here.
   */
  claim(agentId: string, opts?: { takeover?: boolean }): Promise<boolean>;
  release(agentId: string): Promise<void>;
  /** The watching server's lease on the agent (its lines are stored only while it holds it); none with one server. */
  fenceOf?(agentId: string): EventFence | undefined;
  /** Where an agent runs (with workers): this machine, a worker, or queued with why. */
  place?(provider: string, req: { worker?: string; labels: string[] }): Promise<Placed>;
  /** Publish an agent's event (with `write`: in the same transaction, through its `tx`); dropped quietly after shutdown. */
  publish<T extends EventType>(agentId: string, type: T, payload: EventPayload<T>, write?: RowWrite): Promise<void>;
}

/** The agent's folder on its host: session output files, the listen file, its CLI's config. */
export function agentDir(host: Pick<AgentHost, "home">, id: string): string {
  return join(host.home, "agents", id);
}

export function adapterOf(name: string): ProviderAdapter {
  try {
    return getProvider(name);
  } catch (err) {
    throw new DomainError("PROVIDER_UNKNOWN", (err as Error).message);
  }
}

export function workspaceOf(row: AgentRow): Workspace {
  return {
    kind: row.workspaceKind,
    path: row.workspacePath,
    repoRoot: row.workspaceKind === "worktree" ? row.repoPath : null,
    branch: row.branch,
    baseRef: row.baseRef,
    baseCommit: row.baseCommit,
  };
}

/** What a queued agent asked for (its `placement` column). */
export function parsePlacement(text: string | null): { worker?: string; labels: string[] } {
  try {
    const p = JSON.parse(text ?? "{}") as { worker?: unknown; labels?: unknown };
    return { ...(typeof p.worker === "string" ? { worker: p.worker } : {}), labels: Array.isArray(p.labels) ? p.labels.filter((l): l is string => typeof l === "string") : [] };
  } catch {
    return { labels: [] };
  }
}

