import { ClaudeParser } from "./claude-parser";
import { makeGenericProvider } from "./generic";

/**
 * Cursor's CLI agent: `cursor-agent -p --output-format stream-json <prompt>`. Its stream-json is
 * Claude-like (system/init with session_id, assistant message content blocks, result), so the
 * Claude parser reads it; its own `tool_call` started/completed lines have no Claude equivalent
 * and stay raw. `--force` allows commands without asking; `--resume <chat id>` continues a chat.
 * From its docs, not run here.
 *
 * No switchyard MCP server: cursor-agent reads MCP servers only from `.cursor/mcp.json` in the
 * project or in the home directory (no flag, no variable names another file), and writing either
 * would put a file in the agent's worktree (where a commit picks it up) or change the user's own
 * config. Its agents use `yard ask` / `yard listen` (on their PATH) instead.
 */
export const cursorAgentProvider = makeGenericProvider({
  name: "cursor-agent",
  displayName: "Cursor Agent",
  command: "cursor-agent",
  promptFlag: null,
  args: ["-p", "--output-format", "stream-json"],
  permissionArgs: { bypass: ["--force"] },
  modelFlag: "--model",
  resumeFlag: "--resume",
  parser: () => new ClaudeParser(),
  structuredOutput: true,
});
