import { z } from "zod";
import { PermissionDecision } from "./runs";

/**
 * The Comma Agents daemon protocol: every client -> daemon message, as the reference's schema
 * has them (see ../shared/reference/comma-protocol.md). Daemon -> client frames are built from
 * run events in server/runs/frames.ts.
 */
const id = z.string().min(1);
const base = { requestId: z.string().optional() };
const msg = <T extends string, S extends z.ZodRawShape>(type: T, shape: S) => z.object({ type: z.literal(type), ...base, ...shape });

export const PrepareRun = msg("prepare_run", {
  runId: id.optional(),
  strategyPath: id.optional(),
  modelOverride: id.optional(),
  cwd: id.optional(),
  manifestPath: id.optional(),
}).superRefine((m, ctx) => {
  if (!m.runId && !m.strategyPath) ctx.addIssue({ code: "custom", path: ["strategyPath"], message: "prepare_run requires runId or strategyPath" });
});

export const ClientMessage = z.discriminatedUnion("type", [
  PrepareRun,
  msg("start_run", { runId: id, input: z.string().optional() }),
  msg("continue_run", { runId: id, input: z.string() }),
  msg("stop_run", { runId: id }),
  msg("user_input", { runId: id, agentName: z.string(), text: z.string() }),
  msg("permission_decision", { runId: id, permissionRequestId: id, decision: PermissionDecision }),
  msg("question_response", { runId: id, questionRequestId: id, response: z.string() }),
  msg("update_policy", {
    runId: id,
    tool: z.string().optional(),
    mode: z.enum(["read", "write"]),
    allow: z.array(z.string()).optional(),
    deny: z.array(z.string()).optional(),
    default: z.enum(["allow", "deny", "ask"]).optional(),
  }),
  msg("steer_run", { runId: id, text: z.string().min(1) }),
  msg("list_strategies", {}),
  msg("get_available_models", { modelId: z.string().optional(), scope: z.string().optional() }),
  msg("list_providers", { scope: z.string().optional(), live: z.boolean().optional() }),
  msg("list_mcp_servers", { cwd: z.string().optional(), runId: z.string().optional(), strategyPath: z.string().optional() }),
  msg("update_mcp_server", {
    serverId: id,
    enabled: z.boolean(),
    scope: z.enum(["default", "run"]),
    cwd: z.string().optional(),
    runId: z.string().optional(),
    strategyPath: z.string().optional(),
  }),
  msg("register_provider", { providerId: id }),
  msg("unregister_provider", { providerId: id }),
  msg("set_credential", {
    providerId: id,
    credentialType: z.enum(["api", "oauth", "custom"]),
    apiKey: z.string().optional(),
    oauthToken: z.string().optional(),
    customData: z.record(z.string(), z.unknown()).optional(),
  }),
  msg("list_runs", { cwd: z.string().optional() }),
  msg("subscribe", { runId: id }),
  msg("unsubscribe", { runId: id }),
  msg("trash_list", { cwd: z.string().optional() }),
  msg("trash_restore", { cwd: id, trashPath: id, targetPath: z.string().optional() }),
  msg("trash_clear", { cwd: z.string().optional() }),
  msg("ping", {}),
  msg("hub_list", {}),
  msg("hub_install", { name: id, allowCode: z.boolean().optional() }),
  msg("hub_update", { name: id, allowCode: z.boolean().optional() }),
  msg("hub_remove", { name: id }),
]);
export type ClientMessage = z.infer<typeof ClientMessage>;
export type ClientMessageType = ClientMessage["type"];
