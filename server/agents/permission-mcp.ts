import type { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { z } from "zod";
import { isDomainError } from "../errors";
import { PERMISSION_SERVER } from "./agent-launch";
import type { ApprovalDecision } from "./agent-approvals";
import type { AgentsService } from "./agents.service";

/**
 * The `approve` tool of the `switchyard` MCP server, offered on `/mcp/agents/:agentId` bound to
 * that agent (server/mcp/http.ts): Claude Code calls it through `--permission-prompt-tool
 * mcp__switchyard__approve` before a tool use in `ask` mode. The call waits until a human allows
 * or denies it in the dashboard, the CLI or the API (no timeout); the reply is what Claude
 * expects as the tool's text: `{"behavior":"allow","updatedInput":{...}}` or
 * `{"behavior":"deny","message":"..."}`. A refusal of the request itself (the agent is gone, the
 * server is stopping) is a deny with the reason, so the CLI goes on without the tool.
 */

export const ApproveInput = z.looseObject({
  tool_name: z.string().min(1).max(500).describe("The tool the agent wants to use"),
  input: z.unknown().optional().describe("Its input"),
  tool_use_id: z.string().max(500).optional(),
});

export function registerApproveTool(server: McpServer, agents: AgentsService, agentId: string): void {
  server.registerTool(
    PERMISSION_SERVER.toolName,
    {
      title: "Ask the Switchyard user to allow a tool call",
      description: "Ask the Switchyard user to allow or deny a tool call. Waits for the decision. (Claude Code's --permission-prompt-tool.)",
      inputSchema: ApproveInput,
    },
    async (args) => {
      let decision: ApprovalDecision;
      try {
        decision = await agents.requestApproval(agentId, args.tool_name, args.input ?? {});
      } catch (err) {
        if (!isDomainError(err)) throw err;
        decision = { behavior: "deny", message: `${err.code}: ${err.message}` };
      }
      return { content: [{ type: "text", text: JSON.stringify(decision) }] };
    },
  );
}
