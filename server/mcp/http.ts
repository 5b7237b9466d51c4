import { StreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/streamableHttp.js";
import type { FastifyInstance, FastifyReply, FastifyRequest } from "fastify";
import type { IncomingMessage } from "node:http";
import { registerApproveTool } from "../agents/permission-mcp";
import type { Logger } from "../log";
import type { Principal } from "../http/security";
import { principalOf, type Services } from "../trpc/context";
import { createLocalClient } from "./local-client";
import { createSwitchyardMcp } from "./mcp-server";

/**
 * The `switchyard` MCP server on the main port, Streamable HTTP, stateless: each POST gets a
 * fresh server and transport (no session to keep, so any of several servers can answer the next
 * call); answers are SSE streams so a waiting tool can send progress. The guard (Host, Origin,
 * token) has run before routing, as for every request.
 * - `POST /mcp`: every tool.
 * - `POST /mcp/agents/:agentId`: the same, speaking for that agent (`ask` and `pending_questions`
 *   default to it), plus its `approve` tool: what claude's `--permission-prompt-tool` calls
 *   (agent-launch.ts). An agent's own token is accepted only on its own path.
 * GET (a server-initiated stream) and DELETE (a session) are 405: there are no sessions.
 */

/** A tool call's arguments are bounded by the tools' schemas; the body as a whole by this. */
export const MCP_BODY_LIMIT = 4 * 1024 * 1024;

export type McpRouteDeps = { services: Services; log: Logger; version: string };

export function registerMcpRoutes(app: FastifyInstance, deps: McpRouteDeps): void {
  const notAllowed = async (_req: unknown, reply: FastifyReply) => reply.code(405).header("allow", "POST").send({ error: "METHOD_NOT_ALLOWED", message: "This MCP server is stateless: POST only" });
  for (const path of ["/mcp", "/mcp/agents/:agentId"]) {
    app.get(path, notAllowed);
    app.delete(path, notAllowed);
  }
  app.post("/mcp", { bodyLimit: MCP_BODY_LIMIT }, (req, reply) => serve(req, reply, deps, {}));
  app.post<{ Params: { agentId: string } }>("/mcp/agents/:agentId", { bodyLimit: MCP_BODY_LIMIT }, async (req, reply) => {
    const { agents } = deps.services;
    const auth = req.headers.authorization;
    if (auth?.startsWith("Bearer ")) {
      const owner = agents.agentOfToken(auth.slice(7).trim());
      // the main token is accepted by the guard; an agent token only for its own agent
      if (owner !== null && owner !== agents.resolveId(req.params.agentId, { lenient: true })) return reply.code(403).send({ error: "FORBIDDEN", message: "this token belongs to another agent" });
    }
    let agentId: string;
    try {
      agentId = agents.resolveId(req.params.agentId);
    } catch {
      return reply.code(404).send({ error: "NOT_FOUND", message: `No agent "${req.params.agentId}"` });
    }
    return serve(req, reply, deps, { agentId, extend: (server) => registerApproveTool(server, agents, agentId) });
  });
}

async function serve(req: FastifyRequest, reply: FastifyReply, deps: McpRouteDeps, bound: { agentId?: string; extend?: Parameters<typeof createSwitchyardMcp>[0]["extend"] }): Promise<void> {
  const principal = principalOf(req.raw as IncomingMessage & { principal?: Principal });
  const server = createSwitchyardMcp({ yard: createLocalClient(deps.services, principal, deps.log), version: deps.version, ...bound });
  const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined });
  reply.hijack();
  reply.raw.on("close", () => {
    void transport.close();
    void server.close();
  });
  try {
    await server.connect(transport);
    await transport.handleRequest(req.raw, reply.raw, req.body);
  } catch (err) {
    deps.log.error({ err: { message: deps.services.redact(String((err as Error)?.message ?? err)) } }, "MCP request failed");
    if (!reply.raw.headersSent) reply.raw.writeHead(500, { "content-type": "application/json" });
    if (!reply.raw.writableEnded) reply.raw.end(JSON.stringify({ jsonrpc: "2.0", id: null, error: { code: -32603, message: "Internal error" } }));
  }
}
