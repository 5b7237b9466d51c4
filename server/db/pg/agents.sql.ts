import { bigint, boolean, index, integer, pgTable, text, uniqueIndex } from "drizzle-orm/pg-core";

/**
 * CLI agents and their satellite tables (twins of server/agents/agents.sql.ts). Times are epoch
 * ms (bigint), byte sizes and offsets bigint, counters integer; the SQLite 0/1 booleans are
 * boolean. The JSON columns stay text: the stores compare and parse the stored strings.
 */
export const agents = pgTable(
  "agents",
  {
    id: text("id").primaryKey(),
    alias: text("alias").notNull(),
    provider: text("provider").notNull(),
    status: text("status", { enum: ["starting", "queued", "running", "waiting_for_input", "waiting_for_account", "idle", "stopped", "crashed", "interrupted"] }).notNull(),
    version: integer("version").notNull().default(0),
    statusReason: text("status_reason"),
    mode: text("mode", { enum: ["execute", "plan", "discuss", "refine", "review"] }).notNull(),
    permissionMode: text("permission_mode", { enum: ["bypass", "acceptEdits", "ask"] }).notNull(),
    prompt: text("prompt").notNull(),
    task: text("task").notNull(),
    model: text("model"),
    repoPath: text("repo_path"),
    baseRef: text("base_ref"),
    baseCommit: text("base_commit"),
    branch: text("branch"),
    workspacePath: text("workspace_path").notNull(),
    workspaceKind: text("workspace_kind", { enum: ["worktree", "directory"] }).notNull(),
    workspaceRemoved: boolean("workspace_removed").notNull().default(false),
    configDir: text("config_dir").notNull(),
    sessionId: text("session_id"),
    sessionNumber: integer("session_number").notNull().default(0),
    pid: integer("pid"),
    pidStart: text("pid_start"),
    outputPath: text("output_path"),
    outputOffset: bigint("output_offset", { mode: "number" }).notNull().default(0),
    lineCount: integer("line_count").notNull().default(0),
    chunkSeq: integer("chunk_seq").notNull().default(0),
    result: text("result"),
    pendingQuestions: text("pending_questions").notNull().default("[]"),
    queuedMessages: text("queued_messages").notNull().default("[]"),
    usageTotal: text("usage_total").notNull().default("{}"),
    usageSession: text("usage_session").notNull().default("{}"),
    missingSignalRetries: integer("missing_signal_retries").notNull().default(0),
    exitCode: integer("exit_code"),
    taskId: text("task_id"),
    phaseId: text("phase_id"),
    initiativeId: text("initiative_id"),
    /** The agent that spawned this one (its token did), or null: a human, a script or a strategy. */
    parentAgentId: text("parent_agent_id"),
    /** JSON: AgentGrant[], what its token may do beyond itself and its children (given at spawn). */
    grants: text("grants").notNull().default("[]"),
    worker: text("worker"),
    workerEpoch: integer("worker_epoch"),
    placement: text("placement"),
    accountId: text("account_id"),
    runPrompt: text("run_prompt"),
    runResumed: boolean("run_resumed").notNull().default(false),
    commitRequests: integer("commit_requests").notNull().default(0),
    cleanupWarning: text("cleanup_warning"),
    runReason: text("run_reason", { enum: ["spawn", "answers", "message", "missing_signal", "account_switch", "commit_request"] }),
    diskBytes: bigint("disk_bytes", { mode: "number" }),
    diskCheckedAt: bigint("disk_checked_at", { mode: "number" }),
    mergedInto: text("merged_into"),
    mergeStrategy: text("merge_strategy", { enum: ["merge", "squash", "rebase"] }),
    mergeCommit: text("merge_commit"),
    mergedHead: text("merged_head"),
    mergedAt: bigint("merged_at", { mode: "number" }),
    createdAt: bigint("created_at", { mode: "number" }).notNull(),
    updatedAt: bigint("updated_at", { mode: "number" }).notNull(),
    finishedAt: bigint("finished_at", { mode: "number" }),
  },
  (t) => [
    uniqueIndex("agents_alias_idx").on(t.alias),
    index("agents_status_idx").on(t.status),
    index("agents_task_idx").on(t.taskId),
    index("agents_phase_idx").on(t.phaseId),
  ],
);

/** Raw output in batches of lines; `id` an identity (SQLite AUTOINCREMENT). No foreign key. */
export const agentLogChunks = pgTable(
  "agent_log_chunks",
  {
    id: bigint("id", { mode: "number" }).primaryKey().generatedByDefaultAsIdentity(),
    agentId: text("agent_id").notNull(),
    session: integer("session").notNull(),
    seq: integer("seq").notNull(),
    firstLine: integer("first_line").notNull(),
    lineCount: integer("line_count").notNull(),
    bytes: integer("bytes").notNull(),
    content: text("content").notNull(),
    createdAt: bigint("created_at", { mode: "number" }).notNull(),
  },
  (t) => [uniqueIndex("agent_log_chunks_line_idx").on(t.agentId, t.firstLine), index("agent_log_chunks_session_idx").on(t.agentId, t.session, t.seq)],
);

/** Which provider wrote an agent's log. No foreign key. */
export const agentLogs = pgTable("agent_logs", {
  agentId: text("agent_id").primaryKey(),
  provider: text("provider").notNull(),
});

/** Follow-ups sent while an agent works. */
export const agentMessages = pgTable(
  "agent_messages",
  {
    id: text("id").primaryKey(),
    agentId: text("agent_id").notNull(),
    seq: integer("seq").notNull(),
    text: text("text").notNull(),
    createdAt: bigint("created_at", { mode: "number" }).notNull(),
    deliveredAt: bigint("delivered_at", { mode: "number" }),
  },
  (t) => [uniqueIndex("agent_messages_seq_idx").on(t.agentId, t.seq), index("agent_messages_undelivered_idx").on(t.agentId, t.deliveredAt)],
);

/** Tool calls of agents in `ask` mode; `input` is the tool input as JSON text. */
export const agentApprovals = pgTable(
  "agent_approvals",
  {
    id: text("id").primaryKey(),
    agentId: text("agent_id").notNull(),
    toolName: text("tool_name").notNull(),
    input: text("input").notNull(),
    status: text("status", { enum: ["pending", "allowed", "denied", "expired"] }).notNull(),
    message: text("message"),
    createdAt: bigint("created_at", { mode: "number" }).notNull(),
    decidedAt: bigint("decided_at", { mode: "number" }),
  },
  (t) => [index("agent_approvals_agent_idx").on(t.agentId, t.status), index("agent_approvals_status_idx").on(t.status)],
);
