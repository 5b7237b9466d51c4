import { ClaudeParser } from "./claude-parser";
import { makeGenericProvider } from "./generic";
import { writeSecretFile } from "./secret-file";
import type { LaunchSpec } from "./types";

/**
 * Amp: `amp --stream-json -x <prompt>` (execute mode) prints Claude Code-compatible JSON lines, so
 * the Claude parser reads them. `--dangerously-allow-all` skips every permission check. Resuming
 * a thread (`amp threads continue`) is not wired: resumeStyle none. From its docs, not run here;
 * a release without `--stream-json` would print plain text, which the Claude parser keeps raw.
 *
 * The switchyard MCP server: `--mcp-config <file>` (JSON or a path to it, merged with Amp's own
 * settings), the file the agent's own (0600) with the server at the agent's endpoint and its
 * bearer token: argv names the file, never the token.
 */
export function ampMcpConfig(spec: LaunchSpec): string | null {
  const server = spec.mcpServer;
  if (!server) return null;
  return JSON.stringify({ [server.serverName]: { url: server.url, headers: { Authorization: `Bearer ${server.token}` } } });
}

export const ampProvider = makeGenericProvider({
  name: "amp",
  displayName: "Amp",
  command: "amp",
  promptFlag: "-x",
  args: ["--stream-json"],
  permissionArgs: { bypass: ["--dangerously-allow-all"] },
  specArgs: (spec) => (spec.mcpServer ? ["--mcp-config", spec.mcpServer.configPath] : []),
  prepare: async (spec) => {
    const config = ampMcpConfig(spec);
    if (config && spec.mcpServer) await writeSecretFile(spec.mcpServer.configPath, config);
  },
  parser: () => new ClaudeParser(),
  structuredOutput: true,
});
