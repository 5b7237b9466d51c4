import type { FastifyInstance, FastifyReply } from "fastify";
import { z } from "zod";
import { isDomainError } from "../errors";
import { PERMISSION_SERVER } from "./agent-launch";
import type { AgentsService } from "./agents.service";

/**
 * `POST /mcp/agents/:agentId`: a minimal MCP server (streamable HTTP transport, JSON responses)
 * offering one tool, `approve`, that Claude Code calls through `--permission-prompt-tool` before a
 * tool use in `ask` mode. The call waits until a human allows or denies it in the dashboard, the
 * CLI or the API; the reply is what Claude expects: `{"behavior":"allow","updatedInput":{...}}`
 * or `{"behavior":"deny","message":"..."}` as the tool's text content.
 */

const PROTOCOL_VERSION = "2025-06-18";

const JsonRpcRequest = z.object({
  jsonrpc: z.literal("2.0"),
  id: z.union([z.string(), z.number()]).optional(),
  method: z.string(),
  params: z.record(z.string(), z.unknown()).optional(),
});

const ApproveArgs = z.object({ tool_name: z.string(), input: z.unknown().optional(), tool_use_id: z.string().optional() }).passthrough();

const TOOL = {
  name: PERMISSION_SERVER.toolName,
  description: "Ask the Switchyard user to allow or deny a tool call. Waits for the decision.",
  inputSchema: {
    type: "object",
    properties: { tool_name: { type: "string" }, input: { type: "object" }, tool_use_id: { type: "string" } },
    required: ["tool_name", "input"],
  },
};

export function registerPermissionMcp(app: FastifyInstance, agents: AgentsService): void {
  // no server-initiated stream and no sessions: the transport's optional GET and DELETE are refused
  const notAllowed = async (_req: unknown, reply: FastifyReply) => reply.code(405).header("allow", "POST").send();
  app.get("/mcp/agents/:agentId", notAllowed);
  app.delete("/mcp/agents/:agentId", notAllowed);
  app.post<{ Params: { agentId: string } }>("/mcp/agents/:agentId", async (req, reply) => {
    const { agentId } = req.params;
    const auth = req.headers.authorization;
    if (auth?.startsWith("Bearer ")) {
      const owner = agents.agentOfToken(auth.slice(7));
      // the main token is accepted by the guard; an agent token only for its own agent
      if (owner !== null && owner !== agentId) return reply.code(403).send({ error: "this token belongs to another agent" });
    }
    const parsed = JsonRpcRequest.safeParse(req.body);
    if (!parsed.success) return rpcError(reply, null, -32600, `invalid JSON-RPC request: ${parsed.error.issues[0]?.message ?? "bad shape"}`);
    const { id, method, params } = parsed.data;
    if (id === undefined) return reply.code(202).send(); // a notification (notifications/initialized...)
    switch (method) {
      case "initialize":
        return rpcResult(reply, id, {
          protocolVersion: typeof params?.protocolVersion === "string" ? params.protocolVersion : PROTOCOL_VERSION,
          capabilities: { tools: { listChanged: false } },
          serverInfo: { name: "switchyard", version: "1" },
        });
      case "ping":
        return rpcResult(reply, id, {});
      case "tools/list":
        return rpcResult(reply, id, { tools: [TOOL] });
      case "tools/call": {
        if (params?.name !== TOOL.name) return rpcError(reply, id, -32602, `unknown tool ${String(params?.name)}`);
        const args = ApproveArgs.safeParse(params.arguments ?? {});
        if (!args.success) return rpcError(reply, id, -32602, `invalid arguments: ${args.error.issues[0]?.message ?? "bad shape"}`);
        try {
          const decision = await agents.requestApproval(agentId, args.data.tool_name, args.data.input ?? {});
          return rpcResult(reply, id, { content: [{ type: "text", text: JSON.stringify(decision) }] });
        } catch (err) {
          if (isDomainError(err)) return rpcError(reply, id, -32000, err.message);
          throw err;
        }
      }
      default:
        return rpcError(reply, id, -32601, `method not found: ${method}`);
    }
  });
}

function rpcResult(reply: FastifyReply, id: string | number, result: unknown) {
  return reply.code(200).header("content-type", "application/json").send({ jsonrpc: "2.0", id, result });
}

function rpcError(reply: FastifyReply, id: string | number | null, code: number, message: string) {
  return reply.code(200).header("content-type", "application/json").send({ jsonrpc: "2.0", id, error: { code, message } });
}
