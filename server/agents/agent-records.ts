import { and, eq, or } from "drizzle-orm";
import { z } from "zod";
import { AgentQuestion, AgentUsage, QueuedMessage, type AgentInfo, type AgentMerge, type SpawnAgentInput } from "../../shared/agents";
import type { AgentStatus } from "../../shared/statuses";
import type { Db } from "../db/client";
import { DomainError } from "../errors";
import { agents } from "./agents.sql";

type StoredRow = typeof agents.$inferSelect;
type StoredInsert = typeof agents.$inferInsert;

/** Why a process run of an agent started. */
export type RunKind = NonNullable<StoredRow["runReason"]>;

/** The JSON columns, typed: validated when read (a malformed value reads as its empty default). */
type JsonColumns = { pendingQuestions: AgentQuestion[]; queuedMessages: QueuedMessage[]; usageTotal: AgentUsage; usageSession: AgentUsage };
const JSON_COLUMNS: { [K in keyof JsonColumns]: { schema: z.ZodType<JsonColumns[K]>; empty: () => JsonColumns[K] } } = {
  pendingQuestions: { schema: z.array(AgentQuestion), empty: () => [] },
  queuedMessages: { schema: z.array(QueuedMessage), empty: () => [] },
  usageTotal: { schema: AgentUsage.partial().transform((u) => ({ ...EMPTY_USAGE, ...u })), empty: () => ({ ...EMPTY_USAGE }) },
  usageSession: { schema: AgentUsage.partial().transform((u) => ({ ...EMPTY_USAGE, ...u })), empty: () => ({ ...EMPTY_USAGE }) },
};

export type AgentRow = Omit<StoredRow, keyof JsonColumns> & JsonColumns;
/** Columns a caller may write; status and version only change through `transition` (agent-lifecycle.ts). */
export type AgentPatch = Partial<Omit<AgentRow, "id" | "createdAt" | "status" | "version">>;

function readColumn<K extends keyof JsonColumns>(key: K, text: string): JsonColumns[K] {
  const column = JSON_COLUMNS[key];
  try {
    const parsed = column.schema.safeParse(JSON.parse(text));
    return parsed.success ? parsed.data : column.empty();
  } catch {
    return column.empty();
  }
}

/** A stored row with its JSON columns parsed and checked. */
export function fromStored(row: StoredRow): AgentRow {
  return {
    ...row,
    pendingQuestions: readColumn("pendingQuestions", row.pendingQuestions),
    queuedMessages: readColumn("queuedMessages", row.queuedMessages),
    usageTotal: readColumn("usageTotal", row.usageTotal),
    usageSession: readColumn("usageSession", row.usageSession),
  };
}

/** A patch as stored: JSON columns as text. */
function toStored(patch: AgentPatch): Partial<StoredInsert> {
  const out: Record<string, unknown> = { ...patch };
  for (const key of Object.keys(JSON_COLUMNS) as (keyof JsonColumns)[]) {
    if (patch[key] !== undefined) out[key] = JSON.stringify(patch[key]);
  }
  return out as Partial<StoredInsert>;
}

/** Statuses in which a process of the agent may be alive. */
export const LIVE_STATUSES: readonly AgentStatus[] = ["starting", "running"];

const EMPTY_USAGE: AgentUsage = { inputTokens: 0, outputTokens: 0 };

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
    mode: row.mode,
    permissionMode: row.permissionMode,
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
    pendingQuestions: row.pendingQuestions,
    pendingApprovals,
    needsYou: row.status === "waiting_for_input" || pendingApprovals > 0,
    queuedMessages,
    usage: addUsage(row.usageTotal, live ? row.usageSession : EMPTY_USAGE),
    lineCount: row.lineCount,
    taskId: row.taskId,
    phaseId: row.phaseId,
    initiativeId: row.initiativeId,
    parentAgentId: row.parentAgentId,
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

  /** The row of a spawn, before its workspace exists. */
  insertNew(a: { id: string; alias: string; provider: string; input: z.output<typeof SpawnAgentInput>; repo: string; workspacePath: string; configDir: string; accountId: string | null; parentAgentId: string | null }): void {
    const now = Date.now();
    const { input } = a;
    this.insert({
      id: a.id,
      alias: a.alias,
      provider: a.provider,
      mode: input.mode,
      permissionMode: input.permissionMode,
      prompt: input.prompt,
      task: input.prompt,
      model: input.model ?? null,
      repoPath: a.repo,
      baseRef: input.baseRef ?? null,
      workspacePath: a.workspacePath,
      workspaceKind: "worktree",
      configDir: a.configDir,
      taskId: input.taskId ?? null,
      phaseId: input.phaseId ?? null,
      initiativeId: input.initiativeId ?? null,
      parentAgentId: a.parentAgentId,
      accountId: a.accountId,
      createdAt: now,
      updatedAt: now,
    });
  }

  /** A new agent: always `starting`, version 0 (every later status change is a transition). */
  insert(row: Omit<StoredInsert, "status" | "version" | keyof JsonColumns>): void {
    this.db.insert(agents).values({ ...row, status: "starting", version: 0 }).run();
  }

  find(id: string): AgentRow | undefined {
    const row = this.db.select().from(agents).where(eq(agents.id, id)).get();
    return row && fromStored(row);
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

  /** The agents a parent spawned (its children). */
  childrenOf(parentId: string): AgentRow[] {
    return this.db.select().from(agents).where(eq(agents.parentAgentId, parentId)).all().map(fromStored);
  }

  /** How deep in a tree: 0 for an agent no agent spawned, its parent's + 1 otherwise. */
  depthOf(id: string): number {
    let depth = 0;
    for (let row = this.find(id); row?.parentAgentId; row = this.find(row.parentAgentId)) depth++;
    return depth;
  }

  aliasTaken(alias: string): boolean {
    return this.db.select({ id: agents.id }).from(agents).where(eq(agents.alias, alias)).get() !== undefined;
  }

  all(): AgentRow[] {
    return this.db.select().from(agents).all().map(fromStored);
  }

  /**
   * The compare-and-set behind `transition`: status, version + 1 and the patch, only while the
   * row still has `expectedVersion`. False when it moved meanwhile (nothing written).
   */
  compareAndSet(id: string, expectedVersion: number, status: AgentStatus, patch: AgentPatch): boolean {
    const r = this.db
      .update(agents)
      .set({ ...toStored(patch), status, version: expectedVersion + 1, updatedAt: Date.now() })
      .where(and(eq(agents.id, id), eq(agents.version, expectedVersion)))
      .run();
    return r.changes === 1;
  }

  update(id: string, patch: AgentPatch): AgentRow {
    this.db.update(agents).set({ ...toStored(patch), updatedAt: Date.now() }).where(eq(agents.id, id)).run();
    return this.get(id);
  }

  remove(id: string): void {
    this.db.delete(agents).where(eq(agents.id, id)).run();
  }
}
