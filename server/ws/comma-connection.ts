import type { WebSocket } from "ws";
import { ClientMessage } from "../../shared/comma";
import type { BusEvent } from "../../shared/events";
import type { Flow } from "../../shared/strategy";
import { isDomainError, type ErrorCode } from "../errors";
import type { Logger } from "../log";
import { conversationOf, policyChain, type Frame } from "../runs/frames";
import type { RunsService } from "../runs/runs.service";
import { readRunEvents } from "../runs/timeline";
import type { Services } from "../trpc/context";
import { BroadcastOrder } from "./broadcast-order";
import type { WsGateway } from "./gateway";
import type { RunFollowers } from "./run-followers";
import { availableModels, providerList, trashClear, trashList, type ModelsPort } from "./palette";

/**
 * The Comma Agents daemon protocol on `/ws`: framing (`ts` on every frame, PARSE_ERROR,
 * VALIDATION_ERROR, INTERNAL_ERROR; the connection stays open), run subscriptions (silent, live
 * only) fed from the bus through `frameOf` (broadcast branches in declaration order, see
 * broadcast-order.ts), and one handler per client message. Every frame is typed by shared/comma.ts.
 */
export type { ModelsPort } from "./palette";

/** `followers`: the sockets that follow each run; app.ts builds it and hands it to RunsService too (its onEphemeral frames). */
export type CommaDeps = { services: Services; log: Logger; runs: RunsService; followers: RunFollowers; models?: ModelsPort };

export function sendFrame(socket: WebSocket, frame: Frame): void {
  if (socket.readyState !== socket.OPEN) return;
  socket.send(JSON.stringify({ ...frame, ts: new Date().toISOString() }));
}

const reply = (socket: WebSocket, frame: Frame, requestId?: string) => sendFrame(socket, requestId ? { ...frame, requestId } : frame);
const error = (socket: WebSocket, code: ErrorCode, message: string, requestId?: string) => reply(socket, { type: "error", code, message }, requestId);

export function attachCommaProtocol(ws: WsGateway, deps: CommaDeps): void {
  const subs = deps.followers;
  const order = new BroadcastOrder(
    (runId) => deps.runs.inMemory(runId)?.config.strategy.flow as Flow | undefined,
    (runId, frame) => subs.send(runId, frame),
    undefined,
    (runId) => subs.following(runId),
  );
  deps.services.bus.on("*", (event: BusEvent) => order.push(event));

  ws.onConnection((socket) => {
    socket.on("close", () => subs.removeSocket(socket));
    socket.on("message", (data, isBinary) => {
      let raw: unknown;
      try {
        if (isBinary) throw new Error("binary");
        raw = JSON.parse(data.toString());
      } catch {
        return error(socket, "PARSE_ERROR", "Invalid JSON");
      }
      const requestId = typeof raw === "object" && raw !== null && typeof (raw as { requestId?: unknown }).requestId === "string" ? (raw as { requestId: string }).requestId : undefined;
      const parsed = ClientMessage.safeParse(raw);
      if (!parsed.success) {
        const details = parsed.error.issues.map((i) => `${i.path.map(String).join(".")}: ${i.message}`).join("; ");
        return error(socket, "VALIDATION_ERROR", `Invalid message: ${details}`, requestId);
      }
      handle(parsed.data, socket, { ...deps, subs }).catch((err: unknown) => {
        if (isDomainError(err)) return error(socket, err.code, deps.services.redact(err.message), requestId);
        deps.log.error({ err: deps.services.redact(String((err as Error)?.stack ?? err)) }, "ws handler failed");
        error(socket, "INTERNAL_ERROR", deps.services.redact(`Internal error: ${(err as Error)?.message ?? String(err)}`), requestId);
      });
    });
  });
}

type Ctx = CommaDeps & { subs: RunFollowers };

async function handle(m: ClientMessage, socket: WebSocket, ctx: Ctx): Promise<void> {
  const { runs } = ctx;
  const rid = m.requestId;
  switch (m.type) {
    case "ping":
      return reply(socket, { type: "pong" }, rid);
    case "prepare_run": {
      const { run } = await runs.prepare({ runId: m.runId, strategyPath: m.strategyPath, modelOverride: m.modelOverride, cwd: m.cwd, manifestPath: m.manifestPath });
      ctx.subs.add(run.runId, socket);
      const s = run.config.strategy;
      const conversation = conversationOf(await readRunEvents(ctx.services.bus.store, run.runId));
      return reply(socket, { type: "run_prepared", runId: run.runId, strategyName: s.name, agents: Object.keys(s.agents), flowTree: s.flow as unknown as Record<string, unknown>, conversation, mcpServers: [] }, rid);
    }
    case "start_run":
      await runs.start(m.runId, m.input, rid);
      return;
    case "continue_run":
      await runs.continue(m.runId, m.input, rid);
      return;
    case "stop_run":
      await runs.stop(m.runId).catch(() => {});
      return;
    case "subscribe":
      if (!(await runs.exists(m.runId))) return error(socket, "SUBSCRIBE_ERROR", `Run not found: ${m.runId}`, rid);
      ctx.subs.add(m.runId, socket);
      return;
    case "unsubscribe":
      ctx.subs.remove(m.runId, socket);
      return;
    case "list_runs":
      return reply(socket, {
        type: "run_list",
        runs: (await runs.list({ cwd: m.cwd })).items.map((r) => ({ runId: r.runId, cwd: r.cwd, strategyName: r.strategyName, strategyPath: r.strategyPath, startedAt: r.startedAt, completedAt: r.completedAt, status: r.status })),
      }, rid);
    case "list_strategies":
      return reply(socket, { type: "strategy_list", runs: runs.listInMemory() }, rid);
    case "user_input": {
      const pending = await runs.pendingOf(m.runId, "input", (r) => r.agentName === m.agentName);
      if (!pending) return error(socket, "NO_PENDING_INPUT", `No pending input for agent "${m.agentName}" in run ${m.runId}`, rid);
      await runs.respond(m.runId, pending.requestId, { text: m.text });
      return;
    }
    case "question_response": {
      const pending = await runs.pendingOf(m.runId, "question", (r) => r.requestId === m.questionRequestId);
      if (!pending) return error(socket, "NO_PENDING_QUESTION", `No pending question ${m.questionRequestId} in run ${m.runId}`, rid);
      await runs.respond(m.runId, pending.requestId, { text: m.response });
      return;
    }
    case "permission_decision": {
      const pending = await runs.pendingOf(m.runId, "permission", (r) => r.requestId === m.permissionRequestId);
      if (!pending) return error(socket, "NO_PENDING_PERMISSION", `No pending permission request ${m.permissionRequestId} in run ${m.runId}`, rid);
      await runs.respond(m.runId, pending.requestId, { decision: m.decision });
      return;
    }
    case "update_policy": {
      const run = runs.inMemory(m.runId);
      const policies = await runs.updatePolicy(m.runId, { tool: m.tool, mode: m.mode, allow: m.allow, deny: m.deny, default: m.default });
      // as the reference: to the run's subscribers, no requestId (a started run's comes from its
      // event); a requester that does not follow the run gets it too
      const frame: Frame = { type: "policy_updated", runId: m.runId, tool: m.tool ?? "*", policies: policyChain(m.tool ?? "*", policies) };
      if (run?.status === "pending") ctx.subs.send(m.runId, frame);
      if (!ctx.subs.has(m.runId, socket)) reply(socket, frame);
      return;
    }
    case "steer_run":
      await runs.steer(m.runId, m.text);
      return;
    case "get_available_models":
      return reply(socket, { type: "available_models", models: availableModels(ctx.models, m.modelId) }, rid);
    case "list_providers":
      return reply(socket, { type: "provider_list", providers: providerList(ctx.models) }, rid);
    case "register_provider":
    case "unregister_provider":
      return error(socket, "EXEC_FAILED", `Providers are configured on the server (environment variables or <SWITCHYARD_HOME>/providers.json), not over the protocol`, rid);
    case "set_credential":
      return error(socket, "EXEC_FAILED", "Credentials are configured on the server (ANTHROPIC_API_KEY, OPENAI_API_KEY or `yard account add`), not over the protocol", rid);
    case "list_mcp_servers":
      return reply(socket, { type: "mcp_server_list", servers: [] }, rid);
    case "update_mcp_server":
      return error(socket, "MCP_UPDATE_FAILED", `Switchyard runs no MCP servers for strategies (server "${m.serverId}")`, rid);
    case "trash_list":
      return reply(socket, { type: "trash_list_result", ...(await trashList(ctx.services.config.home)) }, rid);
    case "trash_clear":
      return reply(socket, { type: "trash_clear_result", ...(await trashClear(ctx.services.config.home)) }, rid);
    case "trash_restore":
      return error(socket, "RESTORE_FAILED", `Archived worktrees are not restored over the protocol: copy what you need from ${m.trashPath}`, rid);
    case "hub_list":
      return reply(socket, { type: "hub_packages", operation: "list", available: [], installed: [] }, rid);
    case "hub_remove":
      return reply(socket, { type: "hub_packages", operation: "remove", removed: false }, rid);
    case "hub_install":
    case "hub_update":
      return error(socket, "HUB_ERROR", `Switchyard has no strategy hub: package "${m.name}" cannot be installed; put strategy files in the project's strategies folder instead`, rid);
  }
}
