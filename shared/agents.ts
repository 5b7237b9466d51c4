import { z } from "zod";
import { AccountKind } from "./accounts";
import { AgentStatus } from "./statuses";

/**
 * The wire contract of CLI coding agents: normalized stream events (what every provider's line
 * parser produces and the dashboard renders), agent records, and the agents.* API inputs.
 */

export const PermissionMode = z.enum(["bypass", "acceptEdits", "ask"]);
export type PermissionMode = z.infer<typeof PermissionMode>;

export const AgentMode = z.enum(["execute", "plan", "discuss", "refine", "review"]);
export type AgentMode = z.infer<typeof AgentMode>;

/** Token counts and cost of one process run (a session number) of an agent, as totals so far. */
export const AgentUsage = z.object({
  inputTokens: z.number().int().nonnegative(),
  outputTokens: z.number().int().nonnegative(),
  cacheReadTokens: z.number().int().nonnegative().optional(),
  cacheWriteTokens: z.number().int().nonnegative().optional(),
  reasoningTokens: z.number().int().nonnegative().optional(),
  costUsd: z.number().nonnegative().optional(),
});
export type AgentUsage = z.infer<typeof AgentUsage>;

/**
 * One normalized event parsed from a CLI's output line. A line yields zero or more of these.
 * - `usage` carries the TOTALS of the current process run so far (a later usage event of the
 *   same run replaces an earlier one; runs are summed). Parsers convert per-message or cumulative
 *   provider figures into that shape, so nothing is counted twice.
 * - `error` with `fatal: false` is a warning (e.g. codex's `error` item about model metadata).
 * - `raw` is a line no parser understood (plain text CLIs, stderr noise).
 */
export const AgentStreamEvent = z.discriminatedUnion("kind", [
  z.object({ kind: z.literal("session"), sessionId: z.string(), model: z.string().optional(), cwd: z.string().optional() }),
  z.object({ kind: z.literal("text"), text: z.string(), messageId: z.string().optional() }),
  z.object({ kind: z.literal("thinking"), text: z.string(), messageId: z.string().optional() }),
  z.object({ kind: z.literal("tool_call"), id: z.string(), name: z.string(), input: z.unknown().optional() }),
  z.object({
    kind: z.literal("tool_result"),
    id: z.string(),
    /** The tool's name when the parser has paired the result with its call. */
    name: z.string().optional(),
    output: z.string(),
    isError: z.boolean(),
  }),
  z.object({ kind: z.literal("usage"), usage: AgentUsage }),
  z.object({
    kind: z.literal("result"),
    isError: z.boolean(),
    message: z.string(),
    subtype: z.string().optional(),
    sessionId: z.string().optional(),
    numTurns: z.number().int().optional(),
    durationMs: z.number().optional(),
    permissionDenials: z.array(z.object({ toolName: z.string(), input: z.unknown().optional() })).optional(),
  }),
  z.object({ kind: z.literal("error"), message: z.string(), fatal: z.boolean() }),
  z.object({
    kind: z.literal("rate_limit"),
    message: z.string(),
    /** ISO time the provider said the limit resets, when it said so. */
    resetsAt: z.string().optional(),
    /** The CLI retries by itself (a 429 it backs off from); not final unless the run is ended. */
    retrying: z.boolean().optional(),
  }),
  z.object({ kind: z.literal("system"), subtype: z.string(), message: z.string() }),
  z.object({ kind: z.literal("raw"), text: z.string() }),
]);
export type AgentStreamEvent = z.infer<typeof AgentStreamEvent>;

/** The completion signal an agent writes to `.switchyard/output/signal.json` as its last act. */
export const AgentSignal = z.discriminatedUnion("status", [
  z.object({ status: z.literal("done"), result: z.object({ message: z.string() }).passthrough() }).passthrough(),
  z.object({
    status: z.literal("questions"),
    questions: z.array(z.object({ id: z.string().min(1), question: z.string().min(1) }).passthrough()).min(1),
  }).passthrough(),
  z.object({ status: z.literal("error"), error: z.string() }).passthrough(),
]);
export type AgentSignal = z.infer<typeof AgentSignal>;

export const AgentQuestion = z.object({ id: z.string(), question: z.string() });
export type AgentQuestion = z.infer<typeof AgentQuestion>;

export const QueuedMessage = z.object({ id: z.string(), text: z.string(), queuedAt: z.string() });
export type QueuedMessage = z.infer<typeof QueuedMessage>;

export const ApprovalStatus = z.enum(["pending", "allowed", "denied", "expired"]);
export type ApprovalStatus = z.infer<typeof ApprovalStatus>;

/** A tool call an agent in `ask` mode wants to make, waiting for a human. */
export const AgentApproval = z.object({
  id: z.string(),
  agentId: z.string(),
  toolName: z.string(),
  input: z.unknown().optional(),
  status: ApprovalStatus,
  message: z.string().nullable(),
  createdAt: z.string(),
  decidedAt: z.string().nullable(),
});
export type AgentApproval = z.infer<typeof AgentApproval>;

export const MergeStrategy = z.enum(["merge", "squash", "rebase"]);
export type MergeStrategy = z.infer<typeof MergeStrategy>;

/** What merging an agent's branch did (`agents.merge`). */
export const MergeResult = z.object({
  merged: z.boolean(),
  into: z.string(),
  branch: z.string(),
  commit: z.string().nullable(),
  /** The branch head merged (null when nothing was). */
  head: z.string().nullable(),
  /** The branch's commits brought in: those since the previous merge into the same target, else those the target lacks. */
  commits: z.number().int(),
  /** Why nothing was merged (nothing new on the branch, or all of it merged already). */
  reason: z.string().optional(),
  strategy: MergeStrategy,
});
export type MergeResult = z.infer<typeof MergeResult>;

/** One file an agent's workspace changed, as `git diff --numstat` counts it (`agents.changes`). */
export const FileChange = z.object({
  path: z.string(),
  status: z.string(),
  insertions: z.number().int(),
  deletions: z.number().int(),
});
export type FileChange = z.infer<typeof FileChange>;

/** What a sweep of the agents' worktrees did to one of them (`agents.sweep`). */
export const SweepEntry = z.object({
  agentId: z.string(),
  alias: z.string(),
  path: z.string(),
  diskBytes: z.number().int().nullable(),
  removed: z.boolean(),
  note: z.string().optional(),
});
export type SweepEntry = z.infer<typeof SweepEntry>;

/** The lines of one session (process run) of an agent's output log. */
export const SessionBounds = z.object({
  session: z.number().int(),
  fromLine: z.number().int(),
  toLine: z.number().int(),
});
export type SessionBounds = z.infer<typeof SessionBounds>;

/** How a CLI resumes a session: a flag on its command, a subcommand, or not at all. */
export const ResumeStyle = z.enum(["flag", "subcommand", "none"]);
export type ResumeStyle = z.infer<typeof ResumeStyle>;

/** What `ask` mode means for a CLI. */
export const ApprovalSupport = z.object({
  /**
   * True when each tool call the CLI would ask about waits for a human's decision: it routes it
   * to the permission-prompt MCP tool of `LaunchSpec.permissionServer` (`agent.approval_requested`).
   */
  human: z.boolean(),
  /** One sentence for the dashboard: what `ask` does with this CLI. */
  askMeans: z.string(),
});
export type ApprovalSupport = z.infer<typeof ApprovalSupport>;

/** What the dashboard's provider pickers show (agents and accounts). */
export const ProviderSummary = z.object({
  name: z.string(),
  displayName: z.string(),
  structuredOutput: z.boolean(),
  canSteer: z.boolean(),
  resumeStyle: ResumeStyle,
  /** What `ask` means for it: whether approvals reach a human. */
  approvals: ApprovalSupport,
  /** The credential kinds its accounts take; null: it runs on the server's env only. */
  accounts: z.object({ kinds: z.array(AccountKind) }).nullable(),
});
export type ProviderSummary = z.infer<typeof ProviderSummary>;

/** The last merge of an agent's branch: where it went, how, and which branch commit it brought in. */
export const AgentMerge = z.object({
  into: z.string(),
  strategy: MergeStrategy,
  /** The commit that landed on `into` (the merge commit, the squash commit, the last rebased commit). */
  commit: z.string(),
  /** The agent's branch head that was merged: later commits are what a next merge brings in. */
  head: z.string(),
  at: z.string(),
});
export type AgentMerge = z.infer<typeof AgentMerge>;

/**
 * A right an agent's own token has beyond itself and the agents it spawned, given at spawn:
 * `daemons` lets it list, trigger and look inside daemon agents (daemons.list, daemons.trigger,
 * daemons.snapshot, the MCP daemon tools, `POST /daemons/:id/trigger`). An agent may give the
 * agents it spawns only grants it has itself.
 */
export const AgentGrant = z.enum(["daemons"]);
export type AgentGrant = z.infer<typeof AgentGrant>;

/** An agent as the API returns it. */
export const AgentInfo = z.object({
  id: z.string(),
  alias: z.string(),
  provider: z.string(),
  status: AgentStatus,
  /** Why it is in that status (crash reason, stop reason...), when there is one. */
  statusReason: z.string().nullable(),
  mode: AgentMode,
  permissionMode: PermissionMode,
  /** The task as given; `prompt` is what the CLI got (the task in its mode's template). */
  task: z.string(),
  prompt: z.string(),
  model: z.string().nullable(),
  /** The repository on the server: a directory, or for a repository given as a git URL the server's mirror of it. */
  repoPath: z.string().nullable(),
  /** The git URL the agent's repository was given as (its branch is pushed there, merges too); null for a directory. */
  repoUrl: z.string().nullable(),
  baseRef: z.string().nullable(),
  branch: z.string().nullable(),
  workspacePath: z.string(),
  workspaceKind: z.enum(["worktree", "directory"]),
  /** The worktree was cleaned up (its branch is kept when it has commits); a resume brings it back. */
  workspaceRemoved: z.boolean(),
  /** Disk used by the worktree at the last sweep (bytes), when measured. */
  diskBytes: z.number().int().nullable(),
  sessionId: z.string().nullable(),
  /** 1 for the spawn, +1 for every resume. */
  sessionNumber: z.number().int(),
  pid: z.number().int().nullable(),
  result: z.string().nullable(),
  pendingQuestions: z.array(AgentQuestion),
  /** Tool approvals (ask mode) waiting for a human. */
  pendingApprovals: z.number().int().nonnegative(),
  /**
   * Derived, not stored: the agent waits on a human, for answers (`waiting_for_input`) or for a
   * tool approval (still `running`). The dashboard and `yard agent list` show it as "Needs you".
   */
  needsYou: z.boolean(),
  queuedMessages: z.array(QueuedMessage),
  usage: AgentUsage,
  /** Lines of output persisted so far (all sessions). */
  lineCount: z.number().int(),
  taskId: z.string().nullable(),
  phaseId: z.string().nullable(),
  initiativeId: z.string().nullable(),
  /** The agent that spawned this one with its own token (MCP `spawn_agent`, `yard agent spawn` inside an agent), or null. */
  parentAgentId: z.string().nullable(),
  /** What its token may do beyond itself and its children (given at spawn). */
  grants: z.array(AgentGrant),
  /** The worker (`yard worker`) its CLI runs on; null: the server's own machine. */
  worker: z.string().nullable(),
  accountId: z.string().nullable(),
  /** The account's label (accounts are listed by accounts.list). */
  accountLabel: z.string().nullable(),
  /** Set when cleanup kept the worktree because work in it is not committed. */
  cleanupWarning: z.string().nullable(),
  /** The last merge of its branch (null: never merged); `agents.changes` counts the commits since. */
  merge: AgentMerge.nullable(),
  createdAt: z.string(),
  updatedAt: z.string(),
  finishedAt: z.string().nullable(),
});
export type AgentInfo = z.infer<typeof AgentInfo>;

export const SpawnAgentInput = z.object({
  provider: z.string().min(1),
  prompt: z.string().min(1),
  /**
   * The git repository the agent works on: a directory of the server (any directory inside a
   * repository; default the server's cwd), or a git URL (https://, http://, ssh://, git://,
   * user@host:path) that the agent's machine clones and pushes its branch to (docs/SCALING.md).
   */
  repo: z.string().min(1).optional(),
  /** When `repo` is not in a git repository: make it one (its files in a first commit) instead of refusing with REPO_NOT_GIT. */
  init: z.boolean().optional(),
  /** Base ref of the new branch; default the repo's current HEAD. */
  baseRef: z.string().min(1).optional(),
  mode: AgentMode.default("execute"),
  permissionMode: PermissionMode.default("acceptEdits"),
  model: z.string().min(1).optional(),
  alias: z.string().regex(/^[a-z0-9][a-z0-9-]{0,62}$/, "lowercase letters, digits and dashes").optional(),
  taskId: z.string().min(1).optional(),
  phaseId: z.string().min(1).optional(),
  initiativeId: z.string().min(1).optional(),
  /** Run on this registered account (label or id) while it is usable; default: least recently used. */
  account: z.string().min(1).optional(),
  /** Rights its token gets beyond itself and its children (default none); from an agent, only ones it has. */
  grants: z.array(AgentGrant).max(AgentGrant.options.length).optional(),
  /**
   * Where its CLI runs: a worker by name, or "local" (the server's machine). Default: once a worker
   * is registered, the least-loaded connected worker with the provider, the labels and room; else local.
   */
  worker: z.string().regex(/^[a-z0-9][a-z0-9._-]{0,62}$/, "a worker name: lowercase letters, digits, dots, dashes, underscores").optional(),
  /** Only workers carrying every one of these labels (`yard worker --labels`). */
  labels: z.array(z.string().min(1).max(64)).max(16).optional(),
});
export type SpawnAgentInput = z.input<typeof SpawnAgentInput>;

/** One line of agent output as the log view pages it. */
export const AgentOutputLine = z.object({
  line: z.number().int().nonnegative(),
  session: z.number().int(),
  events: z.array(AgentStreamEvent),
  /** The raw line, only when asked for (format "raw" or "both"); truncated past `maxLineBytes`. */
  raw: z.string().optional(),
  /** Bytes of the raw line; a parsed view of a huge line is truncated. */
  bytes: z.number().int(),
  truncated: z.boolean().optional(),
});
export type AgentOutputLine = z.infer<typeof AgentOutputLine>;
