import type { AgentMode, AgentStreamEvent, PermissionMode } from "../../../shared/agents";

/**
 * One adapter per agent CLI (STYLE.md 2): how to build its command, how to resume it, how to
 * parse its output lines into normalized events. Adding a CLI is adding a file beside this one
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

export interface ProviderAdapter {
  /** Registry name: `claude`, `codex`, `fake`, `gemini`, ... */
  name: string;
  displayName: string;
  /** The executable looked up (node_modules/.bin of the repo, then PATH) unless configured. */
  defaultCommand: string;
  promptMode: "argument" | "flag";
  resumeStyle: "flag" | "subcommand" | "none";
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
}
