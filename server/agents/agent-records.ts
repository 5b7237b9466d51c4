import { and, count, eq, inArray, isNotNull, sql } from "drizzle-orm";
import { z } from "zod";
import { AgentGrant, AgentQuestion, AgentUsage, QueuedMessage, type AgentInfo, type AgentMerge, type SpawnAgentInput } from "../../shared/agents";
import type { AgentStatus } from "../../shared/statuses";
import { first, type ReadDb, type Store, type TxDb } from "../db/store";
import { DomainError } from "../errors";
import type { agents } from "./agents.sql";
import { mirrorUrlOf } from "./repo-mirrors";

type StoredRow = typeof agents.$inferSelect;
type StoredInsert = typeof agents.$inferInsert;

/** Why a process run of an agent started. */
export type RunKind = NonNullable<StoredRow["runReason"]>;

/** The JSON columns, typed: validated when read (a malformed value reads as its empty default). */
type JsonColumns = { pendingQuestions: AgentQuestion[]; queuedMessages: QueuedMessage[]; usageTotal: AgentUsage; usageSession: AgentUsage; grants: AgentGrant[] };
const JSON_COLUMNS: { [K in keyof JsonColumns]: { schema: z.ZodType<JsonColumns[K]>; empty: () => JsonColumns[K] } } = {
  pendingQuestions: { schema: z.array(AgentQuestion), empty: () => [] },
  queuedMessages: { schema: z.array(QueuedMessage), empty: () => [] },
  usageTotal: { schema: AgentUsage.partial().transform((u) => ({ ...EMPTY_USAGE, ...u })), empty: () => ({ ...EMPTY_USAGE }) },
  usageSession: { schema: AgentUsage.partial().transform((u) => ({ ...EMPTY_USAGE, ...u })), empty: () => ({ ...EMPTY_USAGE }) },
  // a grant this server does not know (written by a newer one) reads as none: rights fail closed
  grants: { schema: z.array(AgentGrant), empty: () => [] },
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
    grants: readColumn("grants", row.grants),
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
    repoUrl: mirrorUrlOf(row.repoPath),
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
    grants: row.grants,
    worker: row.worker,
    accountId: row.accountId,
    accountLabel: null,
    cleanupWarning: row.cleanupWarning,
    merge: mergeOf(row),
    createdAt: iso(row.createdAt)!,
    updatedAt: iso(row.updatedAt)!,
    finishedAt: iso(row.finishedAt),
  };
}

const notFound = (ref: string) => new DomainError("AGENT_NOT_FOUND", `No agent "${ref}"`, { kind: "NOT_FOUND" });

/**
 * Row access for the agents service, on either store (SQLite or PostgreSQL): reads through
 * `store.read` (or the transaction a caller is in), writes in a transaction of their own, and the
 * compare-and-set of `transition` inside the transaction of the move's event.
 */
export class AgentRecords {
  constructor(private readonly store: Store) {}

  private get t() {
    return this.store.t.agents;
  }

  /** The repositories agents on workers work on (of one worker, when given). */
  async workerRepos(worker?: string): Promise<string[]> {
    const rows = await this.store.read
      .select({ repo: this.t.repoPath })
      .from(this.t)
      .where(worker === undefined ? isNotNull(this.t.worker) : eq(this.t.worker, worker))
      .groupBy(this.t.repoPath);
    return rows.map((r) => r.repo).filter((r): r is string => r !== null);
  }

  /** The row of a spawn, before its workspace exists; false when its alias (or id) is taken. */
  async insertNew(a: {
    id: string;
    alias: string;
    provider: string;
    input: z.output<typeof SpawnAgentInput>;
    repo: string;
    workspacePath: string;
    configDir: string;
    accountId: string | null;
    parentAgentId: string | null;
    worker?: string | null;
    workerEpoch?: number | null;
    placement?: string | null;
  }): Promise<boolean> {
    const now = Date.now();
    const { input } = a;
    return this.insert({
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
      grants: JSON.stringify([...new Set(input.grants ?? [])]),
      worker: a.worker ?? null,
      workerEpoch: a.workerEpoch ?? null,
      placement: a.placement ?? null,
      accountId: a.accountId,
      createdAt: now,
      updatedAt: now,
    });
  }

  /**
   * A new agent: always `starting`, version 0 (every later status change is a transition). False
   * when an agent with its id or alias exists (nothing written).
   */
  async insert(row: Omit<StoredInsert, "status" | "version" | Exclude<keyof JsonColumns, "grants">>): Promise<boolean> {
    const stored = await this.store.tx((tx) =>
      tx
        .insert(this.t)
        .values({ ...row, status: "starting", version: 0 })
        .onConflictDoNothing()
        .returning({ id: this.t.id }),
    );
    return stored.length === 1;
  }

  /** The row with this id (`db`: the transaction a caller is in, else the store's reads). */
  async find(id: string, db: ReadDb = this.store.read): Promise<AgentRow | undefined> {
    const row = await first(db.select().from(this.t).where(eq(this.t.id, id)));
    return row && fromStored(row);
  }

  /** By id, or else by alias; throws AGENT_NOT_FOUND. */
  async get(idOrAlias: string, db: ReadDb = this.store.read): Promise<AgentRow> {
    const row = (await this.find(idOrAlias, db)) ?? (await this.findByAlias(idOrAlias, db));
    if (!row) throw notFound(idOrAlias);
    return row;
  }

  private async findByAlias(alias: string, db: ReadDb): Promise<AgentRow | undefined> {
    const row = await first(db.select().from(this.t).where(eq(this.t.alias, alias)));
    return row && fromStored(row);
  }

  /**
   * The one resolver of agent references: the canonical id of the agent with this id or alias.
   * Unknown: AGENT_NOT_FOUND, or with `lenient` the reference itself (filters over records that
   * outlive their agent: logs, approvals, conversations, events).
   */
  async idOf(idOrAlias: string, opts: { lenient?: boolean } = {}): Promise<string> {
    const byId = await first(this.store.read.select({ id: this.t.id }).from(this.t).where(eq(this.t.id, idOrAlias)));
    const hit = byId ?? (await first(this.store.read.select({ id: this.t.id }).from(this.t).where(eq(this.t.alias, idOrAlias))));
    if (hit) return hit.id;
    if (opts.lenient) return idOrAlias;
    throw notFound(idOrAlias);
  }

  /** The agents working on a branch (of any repository: a branch name is unique per repository only). */
  async onBranch(branch: string): Promise<AgentRow[]> {
    return (await this.store.read.select().from(this.t).where(eq(this.t.branch, branch))).map(fromStored);
  }

  /** The agents a parent spawned (its children). */
  async childrenOf(parentId: string): Promise<AgentRow[]> {
    return (await this.store.read.select().from(this.t).where(eq(this.t.parentAgentId, parentId))).map(fromStored);
  }

  /** How deep in a tree: 0 for an agent no agent spawned, its parent's + 1 otherwise. */
  async depthOf(id: string): Promise<number> {
    let depth = 0;
    const parentOf = async (of: string) => (await first(this.store.read.select({ parent: this.t.parentAgentId }).from(this.t).where(eq(this.t.id, of))))?.parent ?? null;
    for (let parent = await parentOf(id); parent; parent = await parentOf(parent)) depth++;
    return depth;
  }

  async aliasTaken(alias: string): Promise<boolean> {
    return (await first(this.store.read.select({ id: this.t.id }).from(this.t).where(eq(this.t.alias, alias)))) !== undefined;
  }

  /** Every alias in use. */
  async aliases(): Promise<Set<string>> {
    return new Set((await this.store.read.select({ alias: this.t.alias }).from(this.t)).map((r) => r.alias));
  }

  async all(): Promise<AgentRow[]> {
    return (await this.store.read.select().from(this.t)).map(fromStored);
  }

  /** How many agents on an account are in one of `statuses`. */
  async countOnAccount(accountId: string, statuses: readonly AgentStatus[]): Promise<number> {
    const [row] = await this.store.read
      .select({ n: count() })
      .from(this.t)
      .where(and(eq(this.t.accountId, accountId), inArray(this.t.status, [...statuses])));
    return row?.n ?? 0;
  }

  /**
   * The compare-and-set behind `transition`, in the transaction of the move's event: status,
   * version + 1 and the patch, only while the row still has `expectedVersion` (one conditional
   * UPDATE ... RETURNING). The row as written, or null when it moved meanwhile (nothing written).
   * On PostgreSQL the row stays locked until that transaction ends: a concurrent write of the
   * same agent waits for it, then sees the new version and status.
   */
  async compareAndSet(tx: TxDb, id: string, expectedVersion: number, status: AgentStatus, patch: AgentPatch): Promise<AgentRow | null> {
    const [row] = await tx
      .update(this.t)
      .set({ ...toStored(patch), status, version: expectedVersion + 1, updatedAt: Date.now() })
      .where(and(eq(this.t.id, id), eq(this.t.version, expectedVersion)))
      .returning();
    return row ? fromStored(row) : null;
  }

  /** Columns other than status and version; the row as written (AGENT_NOT_FOUND when it is gone). */
  async update(id: string, patch: AgentPatch): Promise<AgentRow> {
    const [row] = await this.store.tx((tx) =>
      tx
        .update(this.t)
        .set({ ...toStored(patch), updatedAt: Date.now() })
        .where(eq(this.t.id, id))
        .returning(),
    );
    if (!row) throw notFound(id);
    return fromStored(row);
  }

  /**
   * A queued agent taken for a place (compare-and-set on its version): false when another pass
   * (here, or another server of the database) took it first. The version is bumped, so the other
   * pass's own claim fails.
   */
  async claimQueued(id: string, version: number, patch: AgentPatch): Promise<AgentRow | null> {
    const [row] = await this.store.tx((tx) =>
      tx
        .update(this.t)
        .set({ ...toStored(patch), version: sql`${this.t.version} + 1`, updatedAt: Date.now() })
        .where(and(eq(this.t.id, id), eq(this.t.status, "queued"), eq(this.t.version, version)))
        .returning(),
    );
    return row ? fromStored(row) : null;
  }

  async remove(id: string): Promise<void> {
    await this.store.tx(async (tx) => {
      await tx.delete(this.t).where(eq(this.t.id, id));
    });
  }
}
