import { mkdir, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { ClaudeParser } from "./claude-parser";
import { promptArg } from "./prompt-arg";
import type { CommandLine, LaunchSpec, ProviderAdapter } from "./types";

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

/** The settings passed with `--settings`: the git allow rules when the workspace is a worktree. */
export function claudeSettings(spec: LaunchSpec): Record<string, unknown> | null {
  if (spec.permissionMode === "bypass" || !spec.git) return null;
  return { permissions: { allow: CLAUDE_GIT_ALLOW } };
}

/** The flags shared by claude and everything that speaks its dialect (our fake agent). */
export function claudeArgs(spec: LaunchSpec): string[] {
  const args = ["-p", promptArg(spec.prompt), "--output-format", "stream-json", "--verbose"];
  if (spec.resumeSessionId) args.push("--resume", spec.resumeSessionId);
  else if (spec.newSessionId) args.push("--session-id", spec.newSessionId);
  if (spec.model) args.push("--model", spec.model);
  const settings = claudeSettings(spec);
  if (settings) args.push("--settings", JSON.stringify(settings));
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
        const config = { mcpServers: { [server.serverName]: { type: "http", url: server.url, headers: { Authorization: `Bearer ${server.token}` } } } };
        args.push("--mcp-config", JSON.stringify(config), "--permission-prompt-tool", `mcp__${server.serverName}__${server.toolName}`);
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
}

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
};
