import { and, eq, or } from "drizzle-orm";
import type { AgentInfo, AgentMerge, AgentQuestion, AgentUsage, QueuedMessage } from "../../shared/agents";
import type { AgentStatus } from "../../shared/statuses";
import type { Db } from "../db/client";
import { DomainError } from "../errors";
import { agents } from "./agents.sql";

export type AgentRow = typeof agents.$inferSelect;
/** Columns a caller may write; status and version only change through `transition` (agent-lifecycle.ts). */
export type AgentPatch = Partial<Omit<AgentRow, "id" | "createdAt" | "status" | "version">>;

/** Statuses in which a process of the agent may be alive. */
export const LIVE_STATUSES: readonly AgentStatus[] = ["starting", "running"];

const EMPTY_USAGE: AgentUsage = { inputTokens: 0, outputTokens: 0 };

export function parseUsage(json: string): AgentUsage {
  try {
    const v = JSON.parse(json) as Partial<AgentUsage>;
    return { ...EMPTY_USAGE, ...v };
  } catch {
    return { ...EMPTY_USAGE };
  }
}

export function addUsage(a: AgentUsage, b: AgentUsage): AgentUsage {
  const sum = (x?: number, y?: number) => (x === undefined && y === undefined ? undefined : (x ?? 0) + (y ?? 0));
  const out: AgentUsage = { inputTokens: a.inputTokens + b.inputTokens, outputTokens: a.outputTokens + b.outputTokens };
  const optional = ["cacheReadTokens", "cacheWriteTokens", "reasoningTokens", "costUsd"] as const;
  for (const key of optional) {
    const v = sum(a[key], b[key]);
    if (v !== undefined) out[key] = v;
  }
  return out;
}

function iso(ms: number | null): string | null {
  return ms === null ? null : new Date(ms).toISOString();
}

function json<T>(text: string, fallback: T): T {
  try {
    return JSON.parse(text) as T;
  } catch {
    return fallback;
  }
}

/** The recorded last merge of the agent's branch, or null. */
export function mergeOf(row: AgentRow): AgentMerge | null {
  if (!row.mergedInto || !row.mergeStrategy || !row.mergeCommit || !row.mergedHead || row.mergedAt === null) return null;
  return { into: row.mergedInto, strategy: row.mergeStrategy, commit: row.mergeCommit, head: row.mergedHead, at: iso(row.mergedAt)! };
}

/** `pendingApprovals`: the agent's tool approvals waiting for a human (AgentApprovals.pendingCounts). */
export function toAgentInfo(row: AgentRow, pendingApprovals = 0, queuedMessages: QueuedMessage[] = []): AgentInfo {
  const live = LIVE_STATUSES.includes(row.status);
  return {
    id: row.id,
    alias: row.alias,
    provider: row.provider,
    status: row.status,
    statusReason: row.statusReason,
    mode: row.mode as AgentInfo["mode"],
    permissionMode: row.permissionMode as AgentInfo["permissionMode"],
    task: row.task,
    prompt: row.prompt,
    model: row.model,
    repoPath: row.repoPath,
    baseRef: row.baseRef,
    branch: row.branch,
    workspacePath: row.workspacePath,
    workspaceKind: row.workspaceKind,
    workspaceRemoved: row.workspaceRemoved,
    diskBytes: row.workspaceRemoved ? null : row.diskBytes,
    sessionId: row.sessionId,
    sessionNumber: row.sessionNumber,
    pid: live ? row.pid : null,
    result: row.result,
    pendingQuestions: json<AgentQuestion[]>(row.pendingQuestions, []),
    pendingApprovals,
    needsYou: row.status === "waiting_for_input" || pendingApprovals > 0,
    queuedMessages,
    usage: addUsage(parseUsage(row.usageTotal), live ? parseUsage(row.usageSession) : EMPTY_USAGE),
    lineCount: row.lineCount,
    taskId: row.taskId,
    phaseId: row.phaseId,
    initiativeId: row.initiativeId,
    accountId: row.accountId,
    accountLabel: null,
    cleanupWarning: row.cleanupWarning,
    merge: mergeOf(row),
    createdAt: iso(row.createdAt)!,
    updatedAt: iso(row.updatedAt)!,
    finishedAt: iso(row.finishedAt),
  };
}

/** Row access for the agents service: small synchronous statements (better-sqlite3). */
export class AgentRecords {
  constructor(private readonly db: Db) {}

  /** A new agent: always `starting`, version 0 (every later status change is a transition). */
  insert(row: Omit<typeof agents.$inferInsert, "status" | "version">): void {
    this.db.insert(agents).values({ ...row, status: "starting", version: 0 }).run();
  }

  find(id: string): AgentRow | undefined {
    return this.db.select().from(agents).where(eq(agents.id, id)).get();
  }

  /** By id (one lookup) or else by alias through idOf; throws AGENT_NOT_FOUND. */
  get(idOrAlias: string): AgentRow {
    const row = this.find(idOrAlias) ?? this.find(this.idOf(idOrAlias));
    if (!row) throw new DomainError("AGENT_NOT_FOUND", `No agent "${idOrAlias}"`, { kind: "NOT_FOUND" });
    return row;
  }

  /**
   * The one resolver of agent references: the canonical id of the agent with this id or alias.
   * Unknown: AGENT_NOT_FOUND, or with `lenient` the reference itself (filters over records that
   * outlive their agent: logs, approvals, conversations, events).
   */
  idOf(idOrAlias: string, opts: { lenient?: boolean } = {}): string {
    const hit = this.db.select({ id: agents.id }).from(agents).where(or(eq(agents.id, idOrAlias), eq(agents.alias, idOrAlias))).get();
    if (hit) return hit.id;
    if (opts.lenient) return idOrAlias;
    throw new DomainError("AGENT_NOT_FOUND", `No agent "${idOrAlias}"`, { kind: "NOT_FOUND" });
  }

  aliasTaken(alias: string): boolean {
    return this.db.select({ id: agents.id }).from(agents).where(eq(agents.alias, alias)).get() !== undefined;
  }

  all(): AgentRow[] {
    return this.db.select().from(agents).all();
  }

  /**
   * The compare-and-set behind `transition`: status, version + 1 and the patch, only while the
   * row still has `expectedVersion`. False when it moved meanwhile (nothing written).
   */
  compareAndSet(id: string, expectedVersion: number, status: AgentStatus, patch: AgentPatch): boolean {
    const r = this.db
      .update(agents)
      .set({ ...patch, status, version: expectedVersion + 1, updatedAt: Date.now() })
      .where(and(eq(agents.id, id), eq(agents.version, expectedVersion)))
      .run();
    return r.changes === 1;
  }

  update(id: string, patch: AgentPatch): AgentRow {
    this.db.update(agents).set({ ...patch, updatedAt: Date.now() }).where(eq(agents.id, id)).run();
    return this.get(id);
  }

  remove(id: string): void {
    this.db.delete(agents).where(eq(agents.id, id)).run();
  }
}
