import { index, integer, sqliteTable, text, uniqueIndex } from "drizzle-orm/sqlite-core";

/** One row per CLI agent: its identity, workspace, current process and completion state. */
export const agents = sqliteTable(
  "agents",
  {
    id: text("id").primaryKey(),
    alias: text("alias").notNull(),
    provider: text("provider").notNull(),
    /** Written only by `transition` (agent-lifecycle.ts), together with `version` and its event. */
    status: text("status", { enum: ["starting", "queued", "running", "waiting_for_input", "waiting_for_account", "idle", "stopped", "crashed", "interrupted"] }).notNull(),
    /** Bumped by every status change: the compare-and-set of `transition(id, event, expectedVersion)`. */
    version: integer("version").notNull().default(0),
    statusReason: text("status_reason"),
    mode: text("mode", { enum: ["execute", "plan", "discuss", "refine", "review"] }).notNull(),
    permissionMode: text("permission_mode", { enum: ["bypass", "acceptEdits", "ask"] }).notNull(),
    prompt: text("prompt").notNull(),
    /** The task as the user gave it (the prompt wraps it in the mode's template). */
    task: text("task").notNull(),
    model: text("model"),
    repoPath: text("repo_path"),
    baseRef: text("base_ref"),
    baseCommit: text("base_commit"),
    branch: text("branch"),
    workspacePath: text("workspace_path").notNull(),
    workspaceKind: text("workspace_kind", { enum: ["worktree", "directory"] }).notNull(),
    workspaceRemoved: integer("workspace_removed", { mode: "boolean" }).notNull().default(false),
    configDir: text("config_dir").notNull(),
    sessionId: text("session_id"),
    sessionNumber: integer("session_number").notNull().default(0),
    pid: integer("pid"),
    /** The process start time (clock ticks since boot, /proc/<pid>/stat) to tell a reused PID apart. */
    pidStart: text("pid_start"),
    /** The current session's stdout file and the byte offset persisted so far. */
    outputPath: text("output_path"),
    outputOffset: integer("output_offset").notNull().default(0),
    lineCount: integer("line_count").notNull().default(0),
    chunkSeq: integer("chunk_seq").notNull().default(0),
    result: text("result"),
    /** JSON: AgentQuestion[] */
    pendingQuestions: text("pending_questions").notNull().default("[]"),
    /** Legacy (before agent_messages): JSON QueuedMessage[]; moved into agent_messages at start, then "[]". */
    queuedMessages: text("queued_messages").notNull().default("[]"),
    /** JSON: AgentUsage summed over finished sessions. */
    usageTotal: text("usage_total").notNull().default("{}"),
    /** JSON: AgentUsage of the current session so far. */
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
    /** The worker (`yard worker --name`) its CLI runs on; null: this server's own machine. */
    worker: text("worker"),
    /** The worker's connection epoch when this agent's current run was placed there (a stale worker is fenced out). */
    workerEpoch: integer("worker_epoch"),
    /** JSON {worker?, labels?}: where it asked to run (a queued agent is placed again with it). */
    placement: text("placement"),
    accountId: text("account_id"),
    /** The prompt of the current process run (retried on another account after a usage limit). */
    runPrompt: text("run_prompt"),
    /** Whether the current process run resumed a session. */
    runResumed: integer("run_resumed", { mode: "boolean" }).notNull().default(false),
    /** Cleanup state: the commit request was sent once; a warning when work is left uncommitted. */
    commitRequests: integer("commit_requests").notNull().default(0),
    cleanupWarning: text("cleanup_warning"),
    /** Why the current process run started: spawn, answers, message, missing_signal, account_switch, commit_request. */
    runReason: text("run_reason", { enum: ["spawn", "answers", "message", "missing_signal", "account_switch", "commit_request"] }),
    /** Disk used by the worktree at the last sweep. */
    diskBytes: integer("disk_bytes"),
    diskCheckedAt: integer("disk_checked_at"),
    /** The last merge of the branch: target, strategy, the commit it made there, the branch head it brought in. */
    mergedInto: text("merged_into"),
    mergeStrategy: text("merge_strategy", { enum: ["merge", "squash", "rebase"] }),
    mergeCommit: text("merge_commit"),
    mergedHead: text("merged_head"),
    mergedAt: integer("merged_at"),
    createdAt: integer("created_at").notNull(),
    updatedAt: integer("updated_at").notNull(),
    finishedAt: integer("finished_at"),
  },
  (t) => [
    uniqueIndex("agents_alias_idx").on(t.alias),
    index("agents_status_idx").on(t.status),
    index("agents_task_idx").on(t.taskId),
    index("agents_phase_idx").on(t.phaseId),
  ],
);

/**
 * Raw output, batched: each row holds `lineCount` consecutive lines (joined by "\n") starting at
 * the agent-wide line number `firstLine`. No foreign key: logs outlive a deleted agent.
 */
export const agentLogChunks = sqliteTable(
  "agent_log_chunks",
  {
    id: integer("id").primaryKey({ autoIncrement: true }),
    agentId: text("agent_id").notNull(),
    session: integer("session").notNull(),
    seq: integer("seq").notNull(),
    firstLine: integer("first_line").notNull(),
    lineCount: integer("line_count").notNull(),
    bytes: integer("bytes").notNull(),
    content: text("content").notNull(),
    createdAt: integer("created_at").notNull(),
  },
  (t) => [uniqueIndex("agent_log_chunks_line_idx").on(t.agentId, t.firstLine), index("agent_log_chunks_session_idx").on(t.agentId, t.session, t.seq)],
);

/**
 * Which provider wrote an agent's log, so a deleted agent's lines are still read with its
 * parser: written with its first chunk (from the agent's row). No foreign key either.
 */
export const agentLogs = sqliteTable("agent_logs", {
  agentId: text("agent_id").primaryKey(),
  provider: text("provider").notNull(),
});

/**
 * Follow-ups sent while an agent works, delivered in order exactly once: a row is written only
 * while the agent is live (in the same transaction as `agent.message_queued`), and an agent moves
 * to idle only in a transaction that finds none of its rows undelivered.
 */
export const agentMessages = sqliteTable(
  "agent_messages",
  {
    id: text("id").primaryKey(),
    agentId: text("agent_id").notNull(),
    seq: integer("seq").notNull(),
    text: text("text").notNull(),
    createdAt: integer("created_at").notNull(),
    deliveredAt: integer("delivered_at"),
  },
  (t) => [uniqueIndex("agent_messages_seq_idx").on(t.agentId, t.seq), index("agent_messages_undelivered_idx").on(t.agentId, t.deliveredAt)],
);

/** Tool calls of agents in `ask` mode waiting for (or decided by) a human. */
export const agentApprovals = sqliteTable(
  "agent_approvals",
  {
    id: text("id").primaryKey(),
    agentId: text("agent_id").notNull(),
    toolName: text("tool_name").notNull(),
    input: text("input").notNull(),
    status: text("status", { enum: ["pending", "allowed", "denied", "expired"] }).notNull(),
    message: text("message"),
    createdAt: integer("created_at").notNull(),
    decidedAt: integer("decided_at"),
  },
  (t) => [index("agent_approvals_agent_idx").on(t.agentId, t.status), index("agent_approvals_status_idx").on(t.status)],
);
