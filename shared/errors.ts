/**
 * The stable error codes of Switchyard, one list per domain. A domain throws
 * `new DomainError(code, message)` (server/errors.ts) with a code of these lists only; the tRPC
 * error formatter sends it as `data.appCode`, the Comma `/ws` and MCP layers as their error's
 * `code`, and the dashboard compares against the same union. Each code belongs to one domain and
 * is documented once, in docs/ERRORS.md (server/errors-doc.test.ts keeps the two in step).
 *
 * No zod here: the dashboard imports this, and zod would be most of its first page's JS. The
 * codes' zod schema is `ErrorCode` in error-schema.ts.
 */

/** The codes of tRPC itself: a failure that carries no domain code answers with its tRPC code. */
export const TransportErrorCodes = [
  "PARSE_ERROR",
  "BAD_REQUEST",
  "INTERNAL_SERVER_ERROR",
  "NOT_IMPLEMENTED",
  "BAD_GATEWAY",
  "SERVICE_UNAVAILABLE",
  "GATEWAY_TIMEOUT",
  "UNAUTHORIZED",
  "PAYMENT_REQUIRED",
  "FORBIDDEN",
  "NOT_FOUND",
  "METHOD_NOT_SUPPORTED",
  "TIMEOUT",
  "CONFLICT",
  "PRECONDITION_FAILED",
  "PAYLOAD_TOO_LARGE",
  "UNSUPPORTED_MEDIA_TYPE",
  "UNPROCESSABLE_CONTENT",
  "PRECONDITION_REQUIRED",
  "TOO_MANY_REQUESTS",
  "CLIENT_CLOSED_REQUEST",
] as const;

/** Codes any front door can answer with: bad input, the server's own state. */
export const CommonErrorCodes = [
  "BAD_INPUT",
  "VALIDATION_ERROR",
  "INTERNAL_ERROR",
  "CONFIG_INVALID",
  "SHUTTING_DOWN",
  "SERVER_UNREACHABLE",
] as const;

export const StrategyErrorCodes = ["STRATEGY_INVALID", "STRATEGY_NOT_FOUND", "STRATEGY_PARSE_ERROR"] as const;

/** Runs: the Comma protocol's run operations and a failed run's stored error. */
export const RunErrorCodes = [
  "RUN_NOT_FOUND",
  "PREPARE_FAILED",
  "START_FAILED",
  "CONTINUE_FAILED",
  "RUN_NOT_STEERABLE",
  "NO_PENDING_REQUEST",
  "RUN_TRANSITION_INVALID",
  "EXECUTION_ERROR",
  "BUDGET_EXCEEDED",
  "CANCELLED",
  "INTERRUPTED",
] as const;

/** The Comma `/ws` protocol's own error frames (server/ws/comma-connection.ts). */
export const CommaErrorCodes = [
  "SUBSCRIBE_ERROR",
  "NO_PENDING_INPUT",
  "NO_PENDING_QUESTION",
  "NO_PENDING_PERMISSION",
  "EXEC_FAILED",
  "MCP_UPDATE_FAILED",
  "HUB_ERROR",
] as const;

/** The MCP server's own tool errors (server/mcp). */
export const McpErrorCodes = ["TOO_MANY_SUBSCRIPTIONS"] as const;

export const AgentErrorCodes = [
  "AGENT_NOT_FOUND",
  "AGENT_NOT_LIVE",
  "AGENT_RUNNING",
  "AGENT_NOT_WAITING",
  "AGENT_WAITING_FOR_ACCOUNT",
  "AGENT_TRANSITION_INVALID",
  "AGENT_VERSION_CONFLICT",
  "AGENT_FOLLOW_UPS_PENDING",
  "AGENT_FOLLOW_UPS_TAKEN",
  "AGENT_CLI_NOT_FOUND",
  "AGENT_FORBIDDEN",
  "AGENT_TREE_TOO_DEEP",
  "AGENT_TOO_MANY_CHILDREN",
  "ALIAS_TAKEN",
  "ANSWERS_MISSING",
  "APPROVAL_NOT_FOUND",
  "APPROVAL_NOT_PENDING",
  "NOT_RESUMABLE",
  "PROVIDER_UNKNOWN",
] as const;

/** An agent's workspace: its repository, worktree, branch, commits and merges. */
export const WorkspaceErrorCodes = [
  "REPO_NOT_FOUND",
  "REPO_NOT_GIT",
  "REPO_URL_INVALID",
  "REPO_UNREACHABLE",
  "BASE_REF_NOT_FOUND",
  "BRANCH_EXISTS",
  "BRANCH_NOT_FOUND",
  "WORKTREE_EXISTS",
  "WORKTREE_FAILED",
  "WORKTREE_INCLUDE_INVALID",
  "WORKTREE_DIRTY",
  "WORKSPACE_REMOVED",
  "NOT_A_WORKTREE",
  "SETUP_FAILED",
  "NOTHING_TO_COMMIT",
  "PUSH_FAILED",
  "MERGE_TARGET_INVALID",
  "MERGE_TARGET_DIRTY",
  "MERGE_CONFLICT",
  "MERGE_FAILED",
  "MERGE_PUSH_FAILED",
] as const;

export const ConversationErrorCodes = ["CONVERSATION_NOT_FOUND", "CONVERSATION_TARGET_NOT_FOUND", "CONVERSATION_SELF", "CONVERSATION_ANSWERED"] as const;

export const DaemonErrorCodes = [
  "DAEMONS_UNAVAILABLE",
  "DAEMON_NOT_FOUND",
  "DAEMON_NAME_AMBIGUOUS",
  "DAEMON_NOT_RUNNING",
  "DAEMON_ALREADY_RUNNING",
  "DAEMON_TRIGGERS_DISABLED",
  "DAEMON_QUEUE_FULL",
  "DAEMON_PATH_NOT_ALLOWED",
  "DAEMON_PERSIST_FAILED",
  "DAEMON_FAILED",
  "RESTORE_FAILED",
] as const;

export const AccountErrorCodes = [
  "ACCOUNT_NOT_FOUND",
  "ACCOUNT_EXISTS",
  "ACCOUNT_IN_USE",
  "ACCOUNT_PROVIDER_MISMATCH",
  "ACCOUNT_PROVIDER_UNSUPPORTED",
  "ACCOUNT_KIND_UNSUPPORTED",
] as const;

export const ModelErrorCodes = ["MODEL_UNAVAILABLE", "PROVIDERS_INVALID"] as const;

/** The database (SQLite file or PostgreSQL) and `yard db copy`. */
export const DatabaseErrorCodes = ["DB_URL_INVALID", "DB_UNREACHABLE", "DB_SCHEMA_NEWER", "DB_COPY_TARGET_NOT_EMPTY", "DB_COPY_SOURCE_MISMATCH", "DB_UNAVAILABLE"] as const;

/** Several servers on one database (docs/SCALING.md). */
export const ClusterErrorCodes = ["SERVER_IN_USE", "LEASE_LOST", "OWNER_UNREACHABLE", "COMMAND_UNKNOWN"] as const;

/** Workers on other machines (`yard worker`; docs/SCALING.md "Agents on other machines"). */
export const WorkerErrorCodes = ["WORKER_NOT_FOUND", "WORKER_UNREACHABLE", "WORKER_REVOKED", "WORKER_STALE_EPOCH", "WORKER_CALL_FAILED"] as const;

export type TransportErrorCode = (typeof TransportErrorCodes)[number];
export type CommonErrorCode = (typeof CommonErrorCodes)[number];
export type StrategyErrorCode = (typeof StrategyErrorCodes)[number];
export type RunErrorCode = (typeof RunErrorCodes)[number];
export type CommaErrorCode = (typeof CommaErrorCodes)[number];
export type McpErrorCode = (typeof McpErrorCodes)[number];
export type AgentErrorCode = (typeof AgentErrorCodes)[number];
export type WorkspaceErrorCode = (typeof WorkspaceErrorCodes)[number];
export type ConversationErrorCode = (typeof ConversationErrorCodes)[number];
export type DaemonErrorCode = (typeof DaemonErrorCodes)[number];
export type AccountErrorCode = (typeof AccountErrorCodes)[number];
export type ModelErrorCode = (typeof ModelErrorCodes)[number];
export type DatabaseErrorCode = (typeof DatabaseErrorCodes)[number];
export type ClusterErrorCode = (typeof ClusterErrorCodes)[number];
export type WorkerErrorCode = (typeof WorkerErrorCodes)[number];

/** Every domain's codes by domain name: the sections of docs/ERRORS.md, in this order. */
export const ErrorCodesByDomain = {
  transport: TransportErrorCodes,
  common: CommonErrorCodes,
  strategies: StrategyErrorCodes,
  runs: RunErrorCodes,
  comma: CommaErrorCodes,
  mcp: McpErrorCodes,
  agents: AgentErrorCodes,
  workspaces: WorkspaceErrorCodes,
  conversations: ConversationErrorCodes,
  daemons: DaemonErrorCodes,
  accounts: AccountErrorCodes,
  models: ModelErrorCodes,
  database: DatabaseErrorCodes,
  cluster: ClusterErrorCodes,
  workers: WorkerErrorCodes,
} as const;
export type ErrorDomain = keyof typeof ErrorCodesByDomain;

/** Every stable code Switchyard answers with. */
export type ErrorCode = (typeof ErrorCodesByDomain)[ErrorDomain][number];

export const ALL_ERROR_CODES: readonly ErrorCode[] = Object.values(ErrorCodesByDomain).flat();

const known = new Set<string>(ALL_ERROR_CODES);
/** True for a code of the catalogue (a code read from the wire, a file or another process). */
export function isErrorCode(code: unknown): code is ErrorCode {
  return typeof code === "string" && known.has(code);
}

/** What the server's tRPC errorFormatter adds to every error's `data` (server/trpc/init.ts). */
export type ErrorData = {
  /** The domain code (DAEMON_QUEUE_FULL...), VALIDATION_ERROR for refused input, else the tRPC code. */
  appCode: ErrorCode;
  issues?: Array<{ path: string; message: string }>;
  details?: unknown;
};
