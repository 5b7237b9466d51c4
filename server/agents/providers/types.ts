import type { AccountKind } from "../../../shared/accounts";
import type { AgentMode, AgentStreamEvent, ApprovalSupport, PermissionMode, ResumeStyle } from "../../../shared/agents";
import type { PermissionOperation } from "../../../shared/runs";

/**
 * One adapter per agent CLI (STYLE.md 2 and 6): how to build its command, how to resume it, how to
 * parse its output lines into normalized events, what its tools are in permission terms, whether
 * `ask` reaches a human, and how accounts reach it. Adding a CLI is adding a file beside this one
 * and listing it in `index.ts`.
 */

/** Everything an adapter needs to build a command line. */
export interface LaunchSpec {
  /** The prompt (task + instructions) for a spawn, or the follow-up text for a resume. */
  prompt: string;
  /** The workspace (git worktree or plain dir) the CLI runs in. */
  cwd: string;
  /** Present on a resume: the provider session/thread id to continue. */
  resumeSessionId?: string;
  /** Present on a spawn when the provider lets the caller pick the session id up front. */
  newSessionId?: string;
  permissionMode: PermissionMode;
  mode: AgentMode;
  model?: string;
  /** A per-agent directory the adapter may use for the CLI's own state (CLAUDE_CONFIG_DIR, CODEX_HOME). */
  configDir: string;
  /** When permissionMode is `ask`: the MCP server the CLI routes its permission prompts to. */
  permissionServer?: { url: string; token: string; toolName: string; serverName: string };
  /**
   * The `switchyard` MCP server every agent gets (its tools: spawn helpers, ask, wait, report),
   * reached with the agent's own scoped token: `url` is the agent's own endpoint
   * (`/mcp/agents/<id>`), `sharedUrl` the plain `/mcp` (for a config shared by several agents, as
   * an account's CODEX_HOME), `configPath` a file of the agent's (0600) where a CLI that takes its
   * MCP config as a file finds it, so the token never shows in argv.
   */
  mcpServer?: { url: string; sharedUrl: string; token: string; serverName: string; configPath: string; tokenEnv: string };
  /** Model endpoints the CLI should talk to (from the server's config). */
  endpoints: { anthropicBaseUrl?: string; openaiBaseUrl?: string };
  /** True when the server runs as root (claude's bypass mode then needs IS_SANDBOX=1). */
  runningAsRoot: boolean;
  /** Present when the workspace is a git worktree: where a commit on the agent's branch writes. */
  git?: WorktreeGit;
}

/**
 * The git locations a commit in an agent's worktree writes to: its own git dir (index, HEAD) and,
 * in the repository's common git dir, the objects and the agent's branch ref and reflog.
 */
export interface WorktreeGit {
  /** `<repo>/.git/worktrees/<alias>` (absolute). */
  gitDir: string;
  /** `<repo>/.git` (absolute). */
  commonDir: string;
  /** `switchyard/<alias>`. */
  branch: string;
}

export interface CommandLine {
  command: string;
  args: string[];
  /** Variables added to the agent's environment (on top of the server's and Switchyard's own). */
  env: Record<string, string>;
}

/** A stateful parser for ONE process run's output (pairs tool results with calls, tracks usage). */
export interface LineParser {
  /** Parse one complete line (without its newline). Never throws: bad lines become `raw` events. */
  parseLine(line: string): AgentStreamEvent[];
  /**
   * True for a line that cannot change an agent's lifecycle (plain assistant text, tool results):
   * ingestion then stores it without parsing, which keeps a 1 GB log cheap. Readers still parse it.
   */
  isRoutine?(line: string): boolean;
}

/** A tool call in a strategy run's permission terms (what its `request_permission` names). */
export interface ToolPermission {
  operation: PermissionOperation;
  resource: string;
}

/** An account's current credentials, as the adapter writes them for its CLI. */
export interface AccountCredentials {
  kind: AccountKind;
  secret: string;
  refreshToken: string | null;
  /** Access-token expiry (epoch ms), oauth only. */
  expiresAt: number | null;
  email: string | null;
}

/** What an agent's environment gets from an account. */
export interface MaterializedAccount {
  env: Record<string, string>;
  /** Variables of the server's environment the agent must not inherit (they would win). */
  unset: string[];
}

/** Tokens the CLI rotated itself in an account's config dir. */
export interface RotatedTokens {
  accessToken: string;
  refreshToken: string | null;
  expiresAt: number;
}

/**
 * How registered accounts reach a CLI. Each account has its own config dir, which becomes the
 * agent's `LaunchSpec.configDir` (CLAUDE_CONFIG_DIR, CODEX_HOME...) while it runs on it.
 */
export interface AccountSupport {
  /** The credential kinds an account of this CLI may hold. */
  kinds: AccountKind[];
  /** What those kinds are, for an error refusing another: "API keys (OPENAI_API_KEY)". */
  kindsText: string;
  /** Write the credentials into the account's config dir (it exists) and say what the env gets. */
  materialize(configDir: string, credentials: AccountCredentials): Promise<MaterializedAccount>;
  /** oauth: tokens the CLI rotated itself since `known.expiresAt`, read back before the next run. */
  rotatedTokens?(configDir: string, known: { expiresAt: number | null }): Promise<RotatedTokens | null>;
  /** The files of the config dir `rotatedTokens` reads (an agent on a worker: read back from there after each run). */
  rotatedFiles?: string[];
  /**
   * Copy an agent's session from one account's config dir to another's (failover); how many
   * entries were copied. 0: the session stays behind, a fresh one gets a hand-over prompt.
   */
  copySession(fromDir: string, toDir: string, sessionId: string): Promise<number>;
}

export interface ProviderAdapter {
  /** Registry name: `claude`, `codex`, `fake`, `gemini`, ... */
  name: string;
  displayName: string;
  /** The executable looked up (node_modules/.bin of the repo, then PATH) unless configured. */
  defaultCommand: string;
  promptMode: "argument" | "flag";
  resumeStyle: ResumeStyle;
  /** True when output is JSON lines with a real parser (not the generic line parser). */
  structuredOutput: boolean;
  /** True when a message can be delivered mid-turn (otherwise queued until the next idle point). */
  canSteer: boolean;
  /** True when the caller can choose the session id up front (`newSessionId`). */
  choosesSessionId: boolean;
  /** Build the command for a spawn (no resumeSessionId) or a resume. */
  buildCommand(spec: LaunchSpec, command: string): CommandLine;
  /** Write anything the CLI needs in `spec.configDir` before it starts (codex's config.toml...). */
  prepare?(spec: LaunchSpec): Promise<void>;
  createParser(): LineParser;
  /** A tool call (as its approval request names it) in permission terms. */
  permissionOf(toolName: string, input: unknown): ToolPermission;
  approvals: ApprovalSupport;
  /** Present when agents of this CLI can run on registered accounts (else: the server's env). */
  accounts?: AccountSupport;
}
