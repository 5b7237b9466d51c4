import type { FastifyInstance } from "fastify";
import type { AgentGrant } from "../../shared/agents";
import { isDomainError, type ErrorCode } from "../errors";
import type { DaemonsService } from "./daemons.service";

const STATUS: Partial<Record<ErrorCode, number>> = { DAEMON_QUEUE_FULL: 429, DAEMON_NOT_FOUND: 404, DAEMON_NOT_RUNNING: 409, DAEMON_NAME_AMBIGUOUS: 409 };

/**
 * `POST /daemons/:id/trigger` (`:id` the daemon's id or name): the JSON body is the payload. 202
 * {seq} once it is durably queued; 429 when the queue is full, 404 for an unknown daemon, 409 when
 * it is not running (or the name is ambiguous). An agent's token (the guard marks the request with
 * it) only when the agent was spawned with the `daemons` grant, as daemons.trigger (agent-scope.ts).
 */
export function registerDaemonWebhook(app: FastifyInstance, service: DaemonsService, agents: { hasGrant(agentId: string, grant: AgentGrant): Promise<boolean> }): void {
  app.post<{ Params: { id: string } }>("/daemons/:id/trigger", async (req, reply) => {
    const principal = (req.raw as { principal?: { kind: string; agentId?: string } }).principal;
    if (principal?.kind === "agent" && !(principal.agentId && (await agents.hasGrant(principal.agentId, "daemons")))) {
      return reply.code(403).send({ error: "FORBIDDEN", message: 'An agent\'s token triggers daemons only with the "daemons" grant, given at spawn' });
    }
    try {
      const { seq } = await service.trigger(req.params.id, req.body ?? null);
      return reply.code(202).send({ seq });
    } catch (err) {
      if (!isDomainError(err)) throw err;
      return reply.code(STATUS[err.code] ?? 400).send({ error: err.code, message: err.message, details: err.details });
    }
  });
}
