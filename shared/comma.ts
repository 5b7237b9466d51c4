import { z } from "zod";
import { PermissionDecision } from "./runs";

/**
 * The Comma Agents daemon protocol (see ../shared/reference/comma-protocol.md): every client ->
 * daemon message, and below every daemon -> client frame, each as the reference's own schemas
 * have it. Run frames are built from run events in server/runs/frames.ts.
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

// ---------------------------------------------------------------------------------------------
// Daemon -> client: every frame we send on /ws, as the reference's own schemas (packages/daemon
// server/protocol/responses) accept them. Strict: a field of our own (stepKey, cliAgentId...) in
// a frame fails the parse, so a test parsing every frame we send keeps the wire clean.

const frame = <T extends string, S extends z.ZodRawShape>(type: T, shape: S) =>
  z.strictObject({ type: z.literal(type), requestId: z.string().optional(), ts: z.iso.datetime(), ...shape });

export const WireUsage = z.strictObject({ promptTokens: z.number().int().nonnegative(), completionTokens: z.number().int().nonnegative() });

export const WireContextUsage = z.strictObject({
  totalTokens: z.number().int().nonnegative(),
  inputTokens: z.number().int().nonnegative().optional(),
  outputTokens: z.number().int().nonnegative().optional(),
  inputTokenDetails: z
    .strictObject({
      noCacheTokens: z.number().int().nonnegative().optional(),
      cacheReadTokens: z.number().int().nonnegative().optional(),
      cacheWriteTokens: z.number().int().nonnegative().optional(),
    })
    .optional(),
});

/** An agent call's (or a step's) result: `contextUsage` for an LLM agent's own call only. */
export const WireCallResult = z.strictObject({ text: z.string(), usage: WireUsage, contextUsage: WireContextUsage.optional(), finishReason: z.string() });

export const WireStreamEvent = z.discriminatedUnion("type", [
  z.strictObject({ type: z.literal("text"), text: z.string() }),
  z.strictObject({ type: z.literal("tool-call"), toolCallId: z.string(), toolName: z.string(), args: z.string() }),
  z.strictObject({
    type: z.literal("tool-result"),
    toolCallId: z.string(),
    toolName: z.string(),
    output: z.string(),
    status: z.enum(["completed", "error"]),
    error: z.string().optional(),
  }),
  z.strictObject({ type: z.literal("thinking-start"), id: z.string() }),
  z.strictObject({ type: z.literal("thinking"), id: z.string(), text: z.string() }),
  z.strictObject({ type: z.literal("thinking-end"), id: z.string() }),
  z.strictObject({ type: z.literal("step-start") }),
  z.strictObject({ type: z.literal("done"), result: WireCallResult }),
]);

/** A conversation record as run_prepared carries it (the reference's ConversationRecord). */
export const WireConversationRecord = z.strictObject({
  id: z.string(),
  agentName: z.string(),
  createdAt: z.string(),
  userMessage: z.looseObject({ role: z.literal("user"), content: z.unknown() }),
  responseMessages: z.array(z.looseObject({ role: z.enum(["assistant", "tool"]), content: z.unknown() })),
  text: z.string(),
  usage: WireUsage,
  contextUsage: WireContextUsage.optional(),
  finishReason: z.string(),
});
export type WireConversationRecord = z.infer<typeof WireConversationRecord>;

/** A human input of the run, placed before the first record it led to. */
export const WireConversationInput = z.strictObject({ text: z.string(), beforeRecordId: z.string().optional() });
export type WireConversationInput = z.infer<typeof WireConversationInput>;

export const WireConversation = z.strictObject({
  records: z.array(WireConversationRecord),
  /** Compaction events: Switchyard does not compact conversations, so always empty. */
  retentionEvents: z.array(z.never()),
  inputs: z.array(WireConversationInput),
});
export type WireConversation = z.infer<typeof WireConversation>;

export const WireMcpServer = z.strictObject({
  id: z.string(),
  source: z.enum(["global", "workspace", "strategy"]),
  transport: z.enum(["http", "sse", "stdio"]),
  enabled: z.boolean(),
  enabledByDefault: z.boolean(),
  connected: z.boolean().optional(),
  toolCount: z.number().int().nonnegative(),
  assignedAgents: z.array(z.string()),
  error: z.string().optional(),
});

const RunStatusWire = z.enum(["pending", "running", "completed", "error", "cancelled"]);

/** A model as the palette lists it (the reference's ModelInfo: the id without its provider). */
export const WireModelInfo = z.strictObject({
  id: z.string(),
  name: z.string().optional(),
  family: z.string().optional(),
  contextWindow: z.number().int().positive().optional(),
  maxOutputTokens: z.number().int().positive().optional(),
});

export const WireAvailableModel = WireModelInfo.extend({ hasCredentials: z.boolean(), providers: z.array(z.string()), configuredProviders: z.array(z.string()) });
export type WireAvailableModel = z.infer<typeof WireAvailableModel>;

export const WireProvider = z.strictObject({
  id: z.string(),
  name: z.string(),
  credentialType: z.enum(["api", "oauth", "custom", "none"]),
  authStatus: z.enum(["none", "configured"]),
  models: z.array(WireModelInfo),
  modelsSource: z.enum(["catalog", "live", "merged", "error"]),
  fetchedAt: z.string().optional(),
  error: z.string().optional(),
  isCustom: z.boolean(),
});
export type WireProvider = z.infer<typeof WireProvider>;

export const WireTrashEntry = z.strictObject({
  path: z.string(),
  metadata: z.strictObject({
    trashedAt: z.string(),
    originalPath: z.string(),
    originalSha256: z.string(),
    sessionId: z.string().optional(),
    runId: z.string().optional(),
    agentName: z.string().optional(),
  }),
  sizeBytes: z.number().int().nonnegative(),
});
export const WireTrashWorkspace = z.strictObject({ cwd: z.string(), entries: z.array(WireTrashEntry) });
export type WireTrashWorkspace = z.infer<typeof WireTrashWorkspace>;

const artifacts = z.array(z.strictObject({ id: z.string(), ref: z.string(), path: z.string(), description: z.string().optional() }));
export const WireHubPackage = z.strictObject({
  name: z.string(),
  version: z.string(),
  description: z.string().optional(),
  path: z.string(),
  keywords: z.array(z.string()).optional(),
  exports: z.strictObject({ strategies: artifacts, agents: artifacts, flows: artifacts, tools: artifacts }),
});
export const WireInstalledHubPackage = z.strictObject({ name: z.string(), version: z.string(), commit: z.string(), path: z.string(), executableCodeApproved: z.boolean() });

export const DaemonMessage = z.discriminatedUnion("type", [
  frame("strategy_started", { runId: z.string(), strategyName: z.string(), agents: z.array(z.string()), flowTree: z.record(z.string(), z.unknown()) }),
  frame("strategy_completed", { runId: z.string(), result: z.string(), usage: WireUsage }),
  frame("strategy_error", { runId: z.string(), error: z.strictObject({ code: z.string(), message: z.string() }) }),
  frame("agent_output", {
    runId: z.string(),
    agentName: z.string(),
    model: z.string().optional(),
    contextWindow: z.number().int().positive().optional(),
    text: z.string(),
    usage: WireUsage,
    contextUsage: WireContextUsage.optional(),
  }),
  frame("agent_streaming", { runId: z.string(), agentName: z.string(), model: z.string().optional(), contextWindow: z.number().int().positive().optional(), event: WireStreamEvent }),
  frame("step_started", { runId: z.string(), stepName: z.string(), message: z.string() }),
  frame("step_completed", { runId: z.string(), stepName: z.string(), result: WireCallResult }),
  frame("steer_queued", { runId: z.string(), text: z.string() }),
  frame("request_input", { runId: z.string(), agentName: z.string(), prompt: z.string().optional() }),
  // requestId here is the permission (question) request's own id, echoed by the client's answer
  frame("request_permission", {
    runId: z.string(),
    agentName: z.string(),
    toolName: z.string().optional(),
    operation: z.enum(["fs.read", "fs.write", "fs.exec"]),
    resource: z.string(),
    reason: z.enum(["policy-ask", "policy-deny-override"]),
    details: z.record(z.string(), z.unknown()).optional(),
  }),
  frame("request_question", { runId: z.string(), agentName: z.string(), toolName: z.string(), question: z.string() }),
  frame("run_prepared", {
    runId: z.string(),
    strategyName: z.string(),
    agents: z.array(z.string()),
    flowTree: z.record(z.string(), z.unknown()),
    conversation: WireConversation,
    mcpServers: z.array(WireMcpServer),
  }),
  frame("run_list", {
    runs: z.array(z.strictObject({ runId: z.string(), cwd: z.string(), strategyName: z.string(), strategyPath: z.string(), startedAt: z.string(), completedAt: z.string().nullable(), status: RunStatusWire })),
  }),
  frame("strategy_list", {
    runs: z.array(z.strictObject({ runId: z.string(), strategyName: z.string(), status: RunStatusWire, startedAt: z.iso.datetime(), completedAt: z.iso.datetime().optional() })),
  }),
  frame("pong", {}),
  frame("error", { code: z.string(), message: z.string() }),
  frame("policy_updated", { runId: z.string(), tool: z.string(), policies: z.array(z.strictObject({ name: z.string() })) }),
  frame("available_models", { models: z.array(WireAvailableModel) }),
  frame("provider_list", { providers: z.array(WireProvider) }),
  frame("provider_registered", { providerId: z.string() }),
  frame("provider_unregistered", { providerId: z.string() }),
  frame("credential_set", { providerId: z.string(), credentialType: z.string() }),
  frame("mcp_server_list", { servers: z.array(WireMcpServer) }),
  frame("trash_list_result", { workspaces: z.array(WireTrashWorkspace), totalEntries: z.number().int().nonnegative(), totalBytes: z.number().int().nonnegative() }),
  frame("trash_clear_result", { cleared: z.number().int().nonnegative(), bytesFreed: z.number().int().nonnegative() }),
  frame("trash_restore_result", { restored: z.string(), from: z.string() }),
  frame("hub_packages", {
    operation: z.enum(["list", "install", "update", "remove"]),
    available: z.array(WireHubPackage).optional(),
    installed: z.array(WireInstalledHubPackage).optional(),
    installedPackage: WireInstalledHubPackage.optional(),
    removed: z.boolean().optional(),
  }),
]);
export type DaemonMessage = z.infer<typeof DaemonMessage>;
export type DaemonMessageType = DaemonMessage["type"];

/** A frame before it is sent: `ts` is stamped at send time. */
export type DaemonFrame = DaemonMessage extends infer M ? (M extends DaemonMessage ? Omit<M, "ts"> : never) : never;
export type DaemonFrameOf<T extends DaemonMessageType> = Omit<Extract<DaemonMessage, { type: T }>, "ts">;
