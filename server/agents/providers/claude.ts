import { mkdir, readFile, rename, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { copySessionFiles } from "../session-transfer";
import { ClaudeParser } from "./claude-parser";
import { promptArg } from "./prompt-arg";
import { writeSecretFile } from "./secret-file";
import { toolPermissions } from "./tool-permissions";
import type { ApprovalSupport } from "../../../shared/agents";
import type { AccountCredentials, AccountSupport, CommandLine, LaunchSpec, ProviderAdapter } from "./types";

/**
 * Claude Code: `claude -p <prompt> --output-format stream-json --verbose`; `--session-id` on a
 * spawn, `--resume` on a resume (same cwd and CLAUDE_CONFIG_DIR: sessions are stored per cwd).
 */

/** The environment that keeps Claude Code on the configured endpoint and quiet. */
export function claudeEnv(spec: LaunchSpec): Record<string, string> {
  const env: Record<string, string> = {
    CLAUDE_CONFIG_DIR: spec.configDir,
    CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: "1",
    DISABLE_AUTOUPDATER: "1",
    DISABLE_TELEMETRY: "1",
    DISABLE_ERROR_REPORTING: "1",
  };
  // Claude Code appends /v1 itself: "http://host/v1" would become ".../v1/v1/messages"
  if (spec.endpoints.anthropicBaseUrl) env.ANTHROPIC_BASE_URL = spec.endpoints.anthropicBaseUrl.replace(/\/+$/, "").replace(/\/v1$/, "");
  // as root, bypassPermissions (= --dangerously-skip-permissions) refuses to start without it
  if (spec.permissionMode === "bypass" && spec.runningAsRoot) env.IS_SANDBOX = "1";
  // a human may take long to decide an approval: never let the MCP call time out into a denial
  if (spec.permissionMode === "ask") env.MCP_TOOL_TIMEOUT = "86400000";
  return env;
}

/**
 * The git commands an agent needs to commit its work in its worktree, allowed without asking in
 * every mode that would otherwise ask (acceptEdits refuses `git add ... && git commit ...` as
 * "multiple operations" needing approval; ask would route each to a human). Prefix rules: `git
 * push`, `git checkout`, `git reset` and the rest still ask.
 */
export const CLAUDE_GIT_ALLOW = ["add", "commit", "status", "diff", "log"].map((c) => `Bash(git ${c}:*)`);

/**
 * The settings passed with `--settings`: the git allow rules when the workspace is a worktree, and
 * the Switchyard MCP server's tools (they act within the agent's own token's rights), so neither
 * asks a human in acceptEdits or ask mode.
 */
export function claudeSettings(spec: LaunchSpec): Record<string, unknown> | null {
  if (spec.permissionMode === "bypass") return null;
  const allow = [...(spec.git ? CLAUDE_GIT_ALLOW : []), ...(spec.mcpServer ? [`mcp__${spec.mcpServer.serverName}`] : [])];
  return allow.length > 0 ? { permissions: { allow } } : null;
}

/** The MCP config file (0600, the agent's own): the Switchyard server with the agent's token. */
export function claudeMcpConfig(spec: LaunchSpec): string | null {
  const server = spec.mcpServer;
  if (!server) return null;
  return JSON.stringify({ mcpServers: { [server.serverName]: { type: "http", url: server.url, headers: { Authorization: `Bearer ${server.token}` } } } });
}

/** The flags shared by claude and everything that speaks its dialect (our fake agent). */
export function claudeArgs(spec: LaunchSpec): string[] {
  const args = ["-p", promptArg(spec.prompt), "--output-format", "stream-json", "--verbose"];
  if (spec.resumeSessionId) args.push("--resume", spec.resumeSessionId);
  else if (spec.newSessionId) args.push("--session-id", spec.newSessionId);
  if (spec.model) args.push("--model", spec.model);
  const settings = claudeSettings(spec);
  if (settings) args.push("--settings", JSON.stringify(settings));
  // the file, not its content: the token stays out of argv (ps shows argv to every user)
  if (spec.mcpServer) args.push("--mcp-config", spec.mcpServer.configPath);
  switch (spec.permissionMode) {
    case "bypass":
      args.push("--permission-mode", "bypassPermissions");
      break;
    case "acceptEdits":
      args.push("--permission-mode", "acceptEdits");
      break;
    case "ask": {
      // default mode asks through the permission-prompt tool; without a server it refuses instead
      args.push("--permission-mode", "default");
      const server = spec.permissionServer;
      if (server) {
        // the same server as spec.mcpServer (its `approve` tool); its own config only when there is none
        if (!spec.mcpServer) {
          const config = { mcpServers: { [server.serverName]: { type: "http", url: server.url, headers: { Authorization: `Bearer ${server.token}` } } } };
          args.push("--mcp-config", JSON.stringify(config));
        }
        args.push("--permission-prompt-tool", `mcp__${server.serverName}__${server.toolName}`);
      }
      break;
    }
  }
  return args;
}

/** A fresh config dir skips onboarding (never overwrite a user's own). */
export async function prepareClaudeHome(spec: LaunchSpec): Promise<void> {
  await mkdir(spec.configDir, { recursive: true });
  // "wx": create only, so an existing file (a login, the CLI's own state) is never overwritten
  await writeFile(join(spec.configDir, ".claude.json"), JSON.stringify({ hasCompletedOnboarding: true }), { flag: "wx" }).catch((e: unknown) => {
    if ((e as NodeJS.ErrnoException).code !== "EEXIST") throw e;
  });
  const mcp = claudeMcpConfig(spec);
  if (mcp && spec.mcpServer) await writeSecretFile(spec.mcpServer.configPath, mcp);
}

/** Claude Code's tools in permission terms (what a strategy run's request_permission names). */
export const claudePermissionOf = toolPermissions({
  write: ["Write", "Edit", "MultiEdit", "NotebookEdit"],
  read: ["Read", "Glob", "Grep", "LS", "WebFetch", "WebSearch"],
});

/** `ask`: `--permission-prompt-tool` routes every prompt to our MCP tool, which waits for a human. */
export const claudeApprovals: ApprovalSupport = {
  human: true,
  askMeans: "Each tool call it would ask about (edits, commands; not its git commits) waits for your Allow or Deny.",
};

/** Every way a Claude Code process could pick up credentials other than the account's. */
const CLAUDE_AUTH_VARS = ["ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN", "CLAUDE_CODE_OAUTH_TOKEN"];

async function writeAtomic(path: string, body: string): Promise<void> {
  const tmp = `${path}.${process.pid}.tmp`;
  await writeFile(tmp, body, { mode: 0o600 });
  await rename(tmp, path);
}

async function readJson(path: string): Promise<Record<string, unknown> | null> {
  try {
    const v = JSON.parse(await readFile(path, "utf8")) as unknown;
    return v !== null && typeof v === "object" && !Array.isArray(v) ? (v as Record<string, unknown>) : null;
  } catch {
    return null;
  }
}

/** `.claude.json`: onboarding marked complete (kept fields: whatever the CLI wrote itself). */
async function markOnboarded(configDir: string, email: string | null): Promise<void> {
  const path = join(configDir, ".claude.json");
  const current = (await readJson(path)) ?? {};
  if (current.hasCompletedOnboarding === true && (!email || current.oauthAccount)) return;
  const next: Record<string, unknown> = { ...current, hasCompletedOnboarding: true };
  if (email && !current.oauthAccount) next.oauthAccount = { emailAddress: email };
  await writeAtomic(path, JSON.stringify(next, null, 2));
}

/** The `.credentials.json` Claude Code reads from its config dir on Linux. */
export function claudeCredentialsFile(c: AccountCredentials): { claudeAiOauth: Record<string, unknown> } {
  if (c.kind === "setup-token") return { claudeAiOauth: { accessToken: c.secret } };
  return { claudeAiOauth: { accessToken: c.secret, refreshToken: c.refreshToken, expiresAt: c.expiresAt, scopes: ["user:inference", "user:profile"] } };
}

/**
 * Claude accounts (and the fake agent's, which reads CLAUDE_CONFIG_DIR too): an API key goes into
 * the env; a setup token or an OAuth login into `.credentials.json`; onboarding marked complete;
 * a session moves as its `projects/<cwd slug>/<id>.jsonl` (and `<id>/` folder).
 */
export const claudeAccounts: AccountSupport = {
  kinds: ["api-key", "setup-token", "oauth"],
  kindsText: "API keys, setup tokens or OAuth logins",
  async materialize(configDir, c) {
    await markOnboarded(configDir, c.email);
    if (c.kind === "api-key") return { env: { ANTHROPIC_API_KEY: c.secret }, unset: CLAUDE_AUTH_VARS.filter((v) => v !== "ANTHROPIC_API_KEY") };
    await writeAtomic(join(configDir, ".credentials.json"), JSON.stringify(claudeCredentialsFile(c), null, 2));
    // a setup token is also what CLAUDE_CODE_OAUTH_TOKEN is for; an oauth login lives in the file only
    // (the CLI refreshes it there, and we read the rotated tokens back before the next spawn)
    const env: Record<string, string> = c.kind === "setup-token" ? { CLAUDE_CODE_OAUTH_TOKEN: c.secret } : {};
    return { env, unset: CLAUDE_AUTH_VARS.filter((v) => !(v in env)) };
  },
  rotatedFiles: [".credentials.json"],
  async rotatedTokens(configDir, known) {
    const file = await readJson(join(configDir, ".credentials.json"));
    const oauth = file?.claudeAiOauth as Record<string, unknown> | undefined;
    if (!oauth || typeof oauth.accessToken !== "string" || typeof oauth.expiresAt !== "number") return null;
    if (known.expiresAt !== null && oauth.expiresAt <= known.expiresAt) return null;
    return { accessToken: oauth.accessToken, refreshToken: typeof oauth.refreshToken === "string" ? oauth.refreshToken : null, expiresAt: oauth.expiresAt };
  },
  copySession: (fromDir, toDir, sessionId) => copySessionFiles(fromDir, toDir, sessionId),
};

export const claudeProvider: ProviderAdapter = {
  name: "claude",
  displayName: "Claude Code",
  defaultCommand: "claude",
  promptMode: "flag",
  resumeStyle: "flag",
  structuredOutput: true,
  canSteer: false,
  choosesSessionId: true,
  buildCommand(spec, command): CommandLine {
    return { command, args: claudeArgs(spec), env: claudeEnv(spec) };
  },
  prepare: prepareClaudeHome,
  createParser: () => new ClaudeParser(),
  permissionOf: claudePermissionOf,
  approvals: claudeApprovals,
  accounts: claudeAccounts,
};
