import { makeGenericProvider } from "./generic";
import { isObject, parseJsonObject } from "./json-object";
import type { LaunchSpec } from "./types";

/**
 * opencode: `opencode run <prompt>` runs one message and exits, plain text output (generic
 * parser). `--model provider/model` picks the model. It has `--session <id>` but prints no session
 * id in plain text mode, so no resume (resumeStyle none). It has no permission flags: what it may
 * do is its own config's business. From its docs, not run here.
 *
 * The switchyard MCP server: OPENCODE_CONFIG_CONTENT, the inline config opencode merges over its
 * global and project configs, holds `mcp.switchyard` (a remote server at the agent's endpoint)
 * with `Authorization: Bearer {env:SWITCHYARD_TOKEN}`, which opencode substitutes from the agent's
 * environment when it loads the config: neither argv nor the variable holds the token. An inline
 * config the server's own environment already has is kept, with the server added to it.
 */
export function opencodeConfigContent(spec: LaunchSpec, existing: string | undefined = process.env.OPENCODE_CONFIG_CONTENT): string | undefined {
  const server = spec.mcpServer;
  if (!server) return existing;
  let base: Record<string, unknown> = {};
  if (existing?.trim()) {
    const parsed = parseJsonObject(existing);
    // not plain JSON (opencode takes JSONC): left as it is, without the server, rather than lost
    if (!parsed) return existing;
    base = parsed;
  }
  const mcp = isObject(base.mcp) ? base.mcp : {};
  const switchyard = { type: "remote", url: server.url, headers: { Authorization: `Bearer {env:${server.tokenEnv}}` }, enabled: true };
  return JSON.stringify({ ...base, mcp: { ...mcp, [server.serverName]: switchyard } });
}

export const opencodeProvider = makeGenericProvider({
  name: "opencode",
  displayName: "opencode",
  command: "opencode",
  promptFlag: null,
  args: ["run"],
  modelFlag: "--model",
  env: (spec): Record<string, string> => {
    const content = spec.mcpServer ? opencodeConfigContent(spec) : undefined;
    return content ? { OPENCODE_CONFIG_CONTENT: content } : {};
  },
});
