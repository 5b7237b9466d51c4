import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { registerResources } from "./resources";
import { registerSubscriptions, type SubscriptionOptions } from "./subscriptions";
import type { ToolContext } from "./tool-kit";
import { SWITCHYARD_TOOLS } from "./tools";

/** The MCP server's name: an agent's config has one `switchyard` entry, its tools `mcp__switchyard__*`. */
export const MCP_SERVER_NAME = "switchyard";

/** Most array elements and object members one tool call's arguments may hold. */
const MAX_INPUT_ELEMENTS = 10_000;

export type SwitchyardMcpOptions = ToolContext & {
  version: string;
  /** More tools for this server only (the `approve` tool of one agent). */
  extend?: (server: McpServer) => void;
  /**
   * Resource subscriptions, for a server that lives as long as its session (stdio, a stateful
   * HTTP session); absent, `subscribe: false` (the stateless `/mcp`: nowhere to push to).
   */
  subscriptions?: SubscriptionOptions;
};

/**
 * The `switchyard` MCP server: every tool (and two resources) over one typed tRPC client. `/mcp`
 * builds one per HTTP session, or per request without one, on an in-process client; `yard mcp`
 * builds one for its stdio session on an HTTP client of a running server.
 */
export function createSwitchyardMcp(options: SwitchyardMcpOptions): McpServer {
  const { version, extend, subscriptions, ...ctx } = options;
  const server = new McpServer(
    { name: MCP_SERVER_NAME, title: "Switchyard", version },
    {
      capabilities: { tools: { listChanged: false } },
      maxToolInputElements: MAX_INPUT_ELEMENTS,
      instructions:
        "Switchyard runs strategy runs (trees of LLM agents), CLI coding agents (each in its own git worktree) and daemon agents. " +
        'Waiting tools (start_run/get_run with wait, wait_for_agent, ask) wait at most 50 s and then answer status "pending": call again to keep waiting. ' +
        "Long output is paged: follow nextFromLine / nextOffset / nextResultOffset. inbox lists everything waiting on a human.",
    },
  );
  for (const tool of SWITCHYARD_TOOLS) tool.register(server, ctx);
  registerResources(server, ctx);
  extend?.(server);
  // the SDK says listChanged: true once tools and resources are registered; all of them are
  // registered before the server connects, and the resource list changes only when read again
  server.server.registerCapabilities({ tools: { listChanged: false } });
  if (subscriptions) registerSubscriptions(server, ctx.yard, subscriptions);
  else server.server.registerCapabilities({ resources: { subscribe: false, listChanged: false } });
  return server;
}
