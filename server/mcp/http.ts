import type { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { StreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/streamableHttp.js";
import { isInitializeRequest } from "@modelcontextprotocol/sdk/types.js";
import type { FastifyInstance, FastifyReply, FastifyRequest } from "fastify";
import { randomUUID } from "node:crypto";
import type { IncomingMessage } from "node:http";
import { registerApproveTool } from "../agents/permission-mcp";
import type { Logger } from "../log";
import type { Principal } from "../http/security";
import { principalOf, type Services } from "../trpc/context";
import { createLocalClient } from "./local-client";
import { createSwitchyardMcp } from "./mcp-server";
import { SESSION_LIMITS, SessionRegistry, type SessionEntry, type SessionLimits } from "./sessions";

/**
 * The `switchyard` MCP server on the main port, Streamable HTTP. The guard (Host, Origin, token)
 * has run before routing, as for every request; each request's principal is the token's.
 * - `/mcp`: every tool. `/mcp/agents/:agentId`: the same, speaking for that agent (`ask` and
 *   `pending_questions` default to it), plus its `approve` tool (claude's
 *   `--permission-prompt-tool`, agent-launch.ts). An agent's own token only on its own path.
 * - An `initialize` opens a session (sessions.ts): `mcp-session-id`, a server of its own that
 *   lives until DELETE, the idle timeout or a restart, a `GET` stream for what it pushes (resource
 *   subscriptions). Its tools run with the principal that opened it; a request with another
 *   principal or on another path does not find it.
 * - Tools stay stateless: a POST without a session id, or with one this server does not know (a
 *   restart, a timeout, another server of several), is served by a fresh server for that request
 *   alone, as before sessions, so an agent whose client never initializes again keeps its tools.
 *   Only what needs the session answers 404 to an unknown id: `GET`, `DELETE`, and
 *   `resources/subscribe` / `unsubscribe`. `GET` or `DELETE` without a session id is 405.
 */

/** A tool call's arguments are bounded by the tools' schemas; the body as a whole by this. */
export const MCP_BODY_LIMIT = 4 * 1024 * 1024;

export type McpRouteDeps = {
  services: Services;
  log: Logger;
  version: string;
  /** The sessions' bounds (default SESSION_LIMITS: 100, 4 per agent token, 10 min idle, 1 min unclaimed). */
  sessions?: Partial<SessionLimits>;
};

type Bound = { agentId?: string; extend?: (server: McpServer) => void };

export function registerMcpRoutes(app: FastifyInstance, deps: McpRouteDeps): void {
  const sessions = new SessionRegistry({ ...SESSION_LIMITS, ...deps.sessions });
  app.addHook("onClose", () => sessions.closeAll());
  const methods = ["GET", "POST", "DELETE"] as const;
  app.route({ method: [...methods], url: "/mcp", bodyLimit: MCP_BODY_LIMIT, handler: (req, reply) => handle(req, reply, deps, sessions, {}) });
  app.route<{ Params: { agentId: string } }>({
    method: [...methods],
    url: "/mcp/agents/:agentId",
    bodyLimit: MCP_BODY_LIMIT,
    handler: async (req, reply) => {
      const { agents } = deps.services;
      const auth = req.headers.authorization;
      if (auth?.startsWith("Bearer ")) {
        const owner = agents.agentOfToken(auth.slice(7).trim());
        // the main token is accepted by the guard; an agent token only for its own agent
        if (owner !== null && owner !== (await agents.resolveId(req.params.agentId, { lenient: true }))) return reply.code(403).send({ error: "FORBIDDEN", message: "this token belongs to another agent" });
      }
      let agentId: string;
      try {
        agentId = await agents.resolveId(req.params.agentId);
      } catch {
        return reply.code(404).send({ error: "NOT_FOUND", message: `No agent "${req.params.agentId}"` });
      }
      return handle(req, reply, deps, sessions, { agentId, extend: (server) => registerApproveTool(server, agents, agentId) });
    },
  });
}

async function handle(req: FastifyRequest, reply: FastifyReply, deps: McpRouteDeps, sessions: SessionRegistry, bound: Bound): Promise<void> {
  const principal = principalOf(req.raw as IncomingMessage & { principal?: Principal });
  const owner = principal.kind === "agent" ? `agent:${principal.agentId}` : "human";
  const route = bound.agentId ? `/mcp/agents/${bound.agentId}` : "/mcp";
  const sessionId = headerOf(req, "mcp-session-id");
  const session = sessionId ? sessions.find(sessionId, owner, route) : undefined;
  if (session) return serveSession(req, reply, deps, sessions, session);
  if (req.method !== "POST") {
    if (sessionId) return sessionNotFound(reply);
    return reply.code(405).header("allow", "POST").send({ error: "METHOD_NOT_ALLOWED", message: "No session: GET (a server stream) and DELETE need the mcp-session-id an initialize answers with" });
  }
  if (sessionId && needsSession(req.body)) return sessionNotFound(reply);
  if (!sessionId && isInitializeRequest(req.body) && sessions.admit(owner)) return openSession(req, reply, deps, sessions, { principal, owner, route, bound });
  return serveStateless(req, reply, deps, principal, bound);
}

/** A fresh server and transport for this one request (no session id in the answer). */
async function serveStateless(req: FastifyRequest, reply: FastifyReply, deps: McpRouteDeps, principal: Principal, bound: Bound): Promise<void> {
  const server = createSwitchyardMcp({ yard: createLocalClient(deps.services, principal, deps.log), version: deps.version, ...bound });
  const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined });
  reply.hijack();
  reply.raw.on("close", () => {
    void transport.close();
    void server.close();
  });
  await guarded(reply, deps, async () => {
    await server.connect(transport);
    await transport.handleRequest(req.raw, reply.raw, req.body);
  });
}

/** The initialize that opens a session: its server lives with the session, not the request. */
async function openSession(req: FastifyRequest, reply: FastifyReply, deps: McpRouteDeps, sessions: SessionRegistry, o: { principal: Principal; owner: string; route: string; bound: Bound }): Promise<void> {
  const server = createSwitchyardMcp({ yard: createLocalClient(deps.services, o.principal, deps.log), version: deps.version, subscriptions: {}, ...o.bound });
  const transport: StreamableHTTPServerTransport = new StreamableHTTPServerTransport({
    sessionIdGenerator: () => randomUUID(),
    onsessioninitialized: (id) =>
      void sessions.add({ id, owner: o.owner, route: o.route, handleRequest: (rq, rs, body) => transport.handleRequest(rq, rs, body), close: () => transport.close() }),
  });
  transport.onclose = () => {
    if (transport.sessionId) sessions.remove(transport.sessionId);
    void server.close();
  };
  reply.hijack();
  await guarded(reply, deps, async () => {
    await server.connect(transport);
    await transport.handleRequest(req.raw, reply.raw, req.body);
  });
  // an initialize the transport refused (bad headers, a batch) opened no session: nothing to keep
  if (!transport.sessionId) void transport.close();
}

async function serveSession(req: FastifyRequest, reply: FastifyReply, deps: McpRouteDeps, sessions: SessionRegistry, session: SessionEntry): Promise<void> {
  reply.hijack();
  if (req.method === "GET") {
    sessions.streamOpened(session);
    reply.raw.on("close", () => sessions.streamClosed(session));
  }
  await guarded(reply, deps, () => session.handleRequest(req.raw, reply.raw, req.body));
}

async function guarded(reply: FastifyReply, deps: McpRouteDeps, fn: () => Promise<void>): Promise<void> {
  try {
    await fn();
  } catch (err) {
    deps.log.error({ err: { message: deps.services.redact(String((err as Error)?.message ?? err)) } }, "MCP request failed");
    if (!reply.raw.headersSent) reply.raw.writeHead(500, { "content-type": "application/json" });
    if (!reply.raw.writableEnded) reply.raw.end(JSON.stringify({ jsonrpc: "2.0", id: null, error: { code: -32603, message: "Internal error" } }));
  }
}

/** 404 with a JSON-RPC error: the spec's word for "initialize again". */
function sessionNotFound(reply: FastifyReply) {
  return reply
    .code(404)
    .header("content-type", "application/json")
    .send({ jsonrpc: "2.0", id: null, error: { code: -32001, message: "Session not found: it ended (DELETE, idle timeout, server restart) or belongs to another token; initialize again" } });
}

/** Requests that mean nothing without the session they name. */
function needsSession(body: unknown): boolean {
  const messages = Array.isArray(body) ? body : [body];
  return messages.some((m) => {
    const method = (m as { method?: unknown } | null)?.method;
    return method === "resources/subscribe" || method === "resources/unsubscribe";
  });
}

function headerOf(req: FastifyRequest, name: string): string | undefined {
  const v = req.headers[name];
  return (Array.isArray(v) ? v[0] : v) || undefined;
}
