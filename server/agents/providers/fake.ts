import { join } from "node:path";
import { REPO_ROOT } from "../../paths";
import { claudeAccounts, claudeApprovals, claudeArgs, claudeEnv, claudePermissionOf, prepareClaudeHome } from "./claude";
import { ClaudeParser } from "./claude-parser";
import type { ProviderAdapter } from "./types";

/**
 * Our scriptable fake agent CLI: Claude's flags, output, tools, approvals and config dir
 * (CLAUDE_CONFIG_DIR, so Claude's accounts work for it), no model. The no-API-key demo, and the
 * test double.
 */
export const FAKE_AGENT_SCRIPT = join(REPO_ROOT, "server", "testing", "fake-agent", "fake-agent.mjs");

export const fakeProvider: ProviderAdapter = {
  name: "fake",
  displayName: "Fake agent (demo)",
  defaultCommand: "node",
  promptMode: "flag",
  resumeStyle: "flag",
  structuredOutput: true,
  canSteer: false,
  choosesSessionId: true,
  buildCommand(spec, command) {
    return { command, args: [FAKE_AGENT_SCRIPT, ...claudeArgs(spec)], env: claudeEnv(spec) };
  },
  prepare: prepareClaudeHome,
  createParser: () => new ClaudeParser(),
  permissionOf: claudePermissionOf,
  approvals: claudeApprovals,
  accounts: claudeAccounts,
};
