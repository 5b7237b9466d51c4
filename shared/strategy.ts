import { z } from "zod";

/**
 * A strategy file (JSON, JSONC, YAML or YML): named agents and one flow tree. This is the wire
 * contract shared by the loader (server/strategies/) and the dashboard. It is strict: an unknown
 * key is an error. Shapes follow the Comma Agents reference schema; `budget` and `cli` agents are
 * Switchyard's own. The loader walks a file with these schemas piece by piece (so each issue names
 * its path), then cross-checks agent references and registered custom types.
 */

// ---------------------------------------------------------------------------------------------
// Messages: every issue says what was expected and what was found.

/** A short description of a value for an error message: `"lots"`, `number 0`, `a list`. */
export function describeValue(value: unknown): string {
  if (value === undefined) return "nothing";
  if (value === null) return "null";
  if (Array.isArray(value)) return "a list";
  if (typeof value === "object") return "a map";
  if (typeof value === "string") return JSON.stringify(value.length > 60 ? `${value.slice(0, 60)}...` : value);
  return `${typeof value} ${String(value)}`;
}

/** zod error option: "expected <what>, got <value>", or "required: expected <what>" when missing. */
export function expected(what: string) {
  return {
    error: (issue: { input?: unknown }) =>
      issue.input === undefined ? `required: expected ${what}` : `expected ${what}, got ${describeValue(issue.input)}`,
  };
}

/** A strict object whose unknown keys are reported as `unknown key "k" (allowed: a, b)`. */
function strictMap<S extends z.core.$ZodLooseShape>(shape: S, what: string) {
  const allowed = Object.keys(shape).join(", ");
  const { error } = expected(what);
  return z.strictObject(shape, {
    error: (issue) =>
      issue.code === "unrecognized_keys"
        ? `unknown key ${issue.keys.map((k) => JSON.stringify(k)).join(", ")} (allowed: ${allowed})`
        : error(issue),
  });
}

const text = () => z.string(expected("a string"));
const nonEmpty = (what = "a non-empty string") => z.string(expected(what)).min(1);
const positiveInt = () => z.number(expected("a positive integer")).int().positive();
const anyMap = (what: string) => z.record(z.string(), z.unknown(), expected(what));

// ---------------------------------------------------------------------------------------------
// Names the validator knows.

export const BUILT_IN_TOOLS = [
  "read_file", "write_file", "create_file", "edit_file", "delete_file", "move_file", "list_directory",
  "glob", "search_files", "run_command", "ask_question", "todo", "apply_patch", "webfetch",
] as const;
export type BuiltInTool = (typeof BUILT_IN_TOOLS)[number];
/** Older strategies' tool names (`read`, `grep`) and the built-in tool each stands for. */
export const TOOL_ALIASES = { read: "read_file", grep: "search_files" } as const satisfies Record<string, BuiltInTool>;
export const TOOL_NAMES = [...BUILT_IN_TOOLS, ...(Object.keys(TOOL_ALIASES) as Array<keyof typeof TOOL_ALIASES>)] as const;

/** The built-in tool a strategy's tool name stands for (`read` -> `read_file`). */
export function resolveToolName(name: ToolName): BuiltInTool {
  return name in TOOL_ALIASES ? TOOL_ALIASES[name as keyof typeof TOOL_ALIASES] : (name as BuiltInTool);
}

export const BUILT_IN_AGENT_TYPES = ["llm", "user", "cli"] as const;
export const BUILT_IN_FLOW_TYPES = ["sequential", "broadcast", "cycle"] as const;
export const BREAK_CYCLE_SIGNAL_MATCHES = ["substring", "first-line", "any-line", "exact"] as const;
export const CLI_PERMISSION_MODES = ["bypass", "acceptEdits", "ask"] as const;

/** Defaults the runner applies; the loader keeps files as written (flowTree is the flow as-is). */
export const DEFAULT_BROADCAST_SEPARATOR = "\n\n";
export const DEFAULT_BREAK_CYCLE_SIGNALS = ["end cycle", "stop", "done"] as const;
export const DEFAULT_BREAK_CYCLE_SIGNAL_MATCH = "substring" satisfies BreakCycleSignalMatch;

// ---------------------------------------------------------------------------------------------
// Agent fields.

/** "provider/model" with non-empty parts (`mock/echo`, `anthropic/claude-sonnet-4-5`). */
export const ModelString = z
  .string(expected('a model "provider/model" (e.g. "anthropic/claude-sonnet-4-5" or "mock/echo")'))
  .regex(/^[^/\s]+\/\S+$/);

export const ToolName = z.enum(TOOL_NAMES, {
  error: (issue) =>
    typeof issue.input === "string"
      ? `unknown tool ${JSON.stringify(issue.input)} (known: ${TOOL_NAMES.join(", ")})`
      : `expected a tool name, got ${describeValue(issue.input)}`,
});
export type ToolName = z.infer<typeof ToolName>;

/** Provider-independent generation parameters (AI SDK call settings). */
export const ModelOptions = strictMap(
  {
    temperature: z.number(expected("a number >= 0")).min(0).optional(),
    topP: z.number(expected("a number between 0 and 1")).min(0).max(1).optional(),
    topK: positiveInt().optional(),
    maxOutputTokens: positiveInt().optional(),
    /** Older name of maxOutputTokens. */
    maxTokens: positiveInt().optional(),
    presencePenalty: z.number(expected("a number")).optional(),
    frequencyPenalty: z.number(expected("a number")).optional(),
    stopSequences: z.array(text(), expected("a list of strings")).optional(),
    seed: z.number(expected("an integer")).int().optional(),
  },
  "a map of model options",
);

const TemplateVariable = z.union(
  [z.string(), z.number(), z.boolean(), z.array(z.string()), z.record(z.string(), z.string())],
  expected("a string, number, boolean, list of strings or map of strings"),
);

export const LlmAgent = strictMap(
  {
    type: z.literal("llm", expected('"llm"')).optional(),
    description: text().optional(),
    model: ModelString,
    systemPrompt: text().optional(),
    systemPromptTemplate: strictMap(
      { template: text(), variables: z.record(z.string(), TemplateVariable, expected("a map of variables")).optional() },
      "a map {template, variables?}",
    ).optional(),
    tools: z.array(ToolName, expected("a list of tool names")).optional(),
    /** Bound on model round-trips per call (each tool call + response is one step). */
    maxSteps: positiveInt().optional(),
    modelOptions: ModelOptions.optional(),
    /** `{ <providerId>: { <option>: <value> } }`, passed to the AI SDK as-is. */
    providerOptions: z
      .record(z.string(), anyMap("a map of options"), expected("a map of provider id -> options"))
      .optional(),
    /** JSON Schema of the agent's structured output. */
    outputSchema: anyMap("a JSON Schema object").optional(),
    /** Accepted, not run yet (the loader warns). */
    mcpServers: z
      .union(
        [z.array(nonEmpty()), z.record(z.string(), anyMap("a server config map"))],
        expected("a list of MCP server ids or a map of server id -> config"),
      )
      .optional(),
    /** Accepted, not loaded yet (the loader warns). */
    skills: z.array(nonEmpty("a skill name"), expected("a list of skill names")).optional(),
    context: strictMap(
      {
        rollingWindow: strictMap(
          { maxMessages: positiveInt().optional(), maxTokens: positiveInt().optional() },
          "a map {maxMessages?, maxTokens?}",
        ).optional(),
        /** Accepted, not applied yet (the loader warns). */
        compaction: anyMap("a compaction config map").optional(),
      },
      "a map {rollingWindow?, compaction?}",
    ).optional(),
  },
  "an LLM agent",
);
export type LlmAgent = z.infer<typeof LlmAgent>;

/** Waits for the user: `request_input` with `config.presetMessage` as the prompt (or ""). */
export const UserAgent = strictMap(
  {
    type: z.literal("user"),
    description: text().optional(),
    config: strictMap(
      { requireInput: z.boolean(expected("true or false")).optional(), presetMessage: text().optional() },
      "a map {requireInput?, presetMessage?}",
    ).optional(),
  },
  "a user agent",
);
export type UserAgent = z.infer<typeof UserAgent>;

/**
 * Switchyard's own: a coding-agent CLI (claude, codex...) run as a step, in a worktree of `repo`
 * (server/runs/cli-step.ts): its output streams as the step's, its questions and approvals are
 * the run's requests, and the step's result is the agent's answer and a summary of its changes.
 */
export const CliAgent = strictMap(
  {
    type: z.literal("cli"),
    description: text().optional(),
    provider: nonEmpty('a CLI provider name (e.g. "claude" or "codex")'),
    repo: nonEmpty("a repository path").optional(),
    baseRef: nonEmpty("a git ref").optional(),
    mode: nonEmpty("a mode name").optional(),
    permissionMode: z.enum(CLI_PERMISSION_MODES, expected(CLI_PERMISSION_MODES.join(", "))).optional(),
    promptTemplate: text().optional(),
    account: nonEmpty("an account name").optional(),
  },
  "a CLI agent",
);
export type CliAgent = z.infer<typeof CliAgent>;

/** An agent of a registered custom type; the registry validates its `config`. */
export const CustomAgent = strictMap(
  {
    type: nonEmpty("a registered agent type").refine((t) => !(BUILT_IN_AGENT_TYPES as readonly string[]).includes(t)),
    description: text().optional(),
    config: anyMap("a config map").optional(),
  },
  "a custom agent",
);
export type CustomAgent = z.infer<typeof CustomAgent>;

export const AgentDef = z.union([LlmAgent, UserAgent, CliAgent, CustomAgent]);
export type AgentDef = z.infer<typeof AgentDef>;

/** The schema an agent definition is checked with, chosen by its `type` (default `llm`). */
export function agentSchemaFor(type: unknown) {
  if (type === undefined || type === "llm") return LlmAgent;
  if (type === "user") return UserAgent;
  if (type === "cli") return CliAgent;
  return CustomAgent;
}

// ---------------------------------------------------------------------------------------------
// Flows. The `*FlowFields` schemas check one level (steps unchecked); `Flow` is the whole tree.

export const AgentStep = strictMap({ agent: nonEmpty("an agent name"), description: text().optional() }, "an agent step");
export type AgentStep = z.infer<typeof AgentStep>;

const steps = <T extends z.ZodType>(step: T) => z.array(step, expected("a list of steps")).min(1, "a flow needs at least one step");
const flowBase = { name: nonEmpty("a non-empty flow name").optional(), description: text().optional() };

export const SequentialFlowFields = strictMap(
  { ...flowBase, type: z.literal("sequential"), steps: steps(z.unknown()) },
  "a sequential flow",
);
export const BroadcastFlowFields = strictMap(
  { ...flowBase, type: z.literal("broadcast"), steps: steps(z.unknown()), separator: text().optional() },
  "a broadcast flow",
);
export const CycleFlowFields = strictMap(
  {
    ...flowBase,
    type: z.literal("cycle"),
    steps: steps(z.unknown()),
    cycles: z
      .union([z.number(expected('a positive integer or "Infinity"')).int().positive(), z.literal("Infinity")], expected('a positive integer or "Infinity"'))
      .optional(),
    observer: nonEmpty("an agent name").optional(),
    breakCycleSignals: z.array(nonEmpty("a non-empty signal"), expected("a list of signals")).min(1, "needs at least one signal").optional(),
    breakCycleSignalMatch: z.enum(BREAK_CYCLE_SIGNAL_MATCHES, expected(BREAK_CYCLE_SIGNAL_MATCHES.join(", "))).optional(),
  },
  "a cycle flow",
);
export const CustomFlowFields = strictMap(
  {
    ...flowBase,
    type: nonEmpty("a flow type").refine((t) => !(BUILT_IN_FLOW_TYPES as readonly string[]).includes(t)),
    steps: steps(z.unknown()),
    config: anyMap("a config map").optional(),
  },
  "a custom flow",
);

// Interfaces, because the tree is recursive: each flow's fields, with its steps typed.
export interface SequentialFlow extends Omit<z.infer<typeof SequentialFlowFields>, "steps"> { steps: FlowStep[] }
export interface BroadcastFlow extends Omit<z.infer<typeof BroadcastFlowFields>, "steps"> { steps: FlowStep[] }
export interface CycleFlow extends Omit<z.infer<typeof CycleFlowFields>, "steps"> { steps: FlowStep[] }
export interface CustomFlow extends Omit<z.infer<typeof CustomFlowFields>, "steps"> { steps: FlowStep[] }
export type Flow = SequentialFlow | BroadcastFlow | CycleFlow | CustomFlow;
export type FlowStep = AgentStep | Flow;
export type BreakCycleSignalMatch = (typeof BREAK_CYCLE_SIGNAL_MATCHES)[number];

export const FlowStep: z.ZodType<FlowStep> = z.lazy(() => z.union([AgentStep, Flow]));
export const Flow: z.ZodType<Flow> = z.lazy(() =>
  z.union([
    SequentialFlowFields.extend({ steps: steps(FlowStep) }),
    BroadcastFlowFields.extend({ steps: steps(FlowStep) }),
    CycleFlowFields.extend({ steps: steps(FlowStep) }),
    CustomFlowFields.extend({ steps: steps(FlowStep) }),
  ]),
);

// ---------------------------------------------------------------------------------------------
// The strategy.

/** Switchyard's own: a run stops when it has spent this much. */
export const Budget = strictMap(
  { tokens: positiveInt().optional(), usd: z.number(expected("a positive number")).positive().optional() },
  "a map {tokens?, usd?}",
);

export const StrategyVersion = z
  .string({
    error: (issue) =>
      typeof issue.input === "number"
        ? `expected a string, got number ${issue.input}: quote it (version: "1.0")`
        : expected("a non-empty version string").error(issue),
  })
  .min(1);

/**
 * Switchyard's own: what the run's tools may do without asking. `run_command`: "auto" (default:
 * commands the deny-list lets through run without asking), "ask" (every command asks a human), or
 * {ask: [patterns]} (commands matching a glob over the command line ask, the rest run).
 */
export const Permissions = strictMap(
  {
    run_command: z
      .union(
        [z.enum(["auto", "ask"]), strictMap({ ask: z.array(nonEmpty("a command pattern"), expected("a list of command patterns")) }, "a map {ask: [patterns]}")],
        expected('"auto", "ask" or a map {ask: [patterns]}'),
      )
      .optional(),
  },
  "a map {run_command?}",
);
export type Permissions = z.infer<typeof Permissions>;

/** The top level with `agents` and `flow` unchecked: the loader walks those itself. */
export const StrategyFields = strictMap(
  {
    name: nonEmpty("a non-empty strategy name"),
    version: StrategyVersion,
    description: text().optional(),
    budget: Budget.optional(),
    permissions: Permissions.optional(),
    agents: anyMap("a map of agent name -> agent"),
    flow: anyMap("a flow map {type, steps}"),
  },
  "a strategy map {name, version, agents, flow}",
);

export const Strategy = StrategyFields.extend({
  agents: z.record(z.string(), AgentDef, expected("a map of agent name -> agent")),
  flow: Flow,
});
export type Strategy = z.infer<typeof Strategy>;

export const isAgentStep = (step: FlowStep): step is AgentStep => "agent" in step;
export const isLlmAgent = (agent: AgentDef): agent is LlmAgent => agent.type === undefined || agent.type === "llm";
export const isUserAgent = (agent: AgentDef): agent is UserAgent => agent.type === "user";
export const isCliAgent = (agent: AgentDef): agent is CliAgent => agent.type === "cli";
export const isCustomAgent = (agent: AgentDef): agent is CustomAgent =>
  !(BUILT_IN_AGENT_TYPES as readonly (string | undefined)[]).includes(agent.type) && agent.type !== undefined;
export const isBroadcastFlow = (flow: Flow): flow is BroadcastFlow => flow.type === "broadcast";
export const isCycleFlow = (flow: Flow): flow is CycleFlow => flow.type === "cycle";

/** `["flow", "steps", 2, "agent"]` -> `flow.steps[2].agent`; odd keys are quoted: `agents["my agent"]`. */
export function formatPath(path: ReadonlyArray<string | number>): string {
  let out = "";
  for (const seg of path) {
    if (typeof seg === "number") out += `[${seg}]`;
    else if (/^[A-Za-z_$][\w$-]*$/.test(seg)) out += out ? `.${seg}` : seg;
    else out += `[${JSON.stringify(seg)}]`;
  }
  return out;
}

// ---------------------------------------------------------------------------------------------
// Loader results and the strategies API (tRPC input/output).

export const StrategyFormat = z.enum(["json", "jsonc", "yaml", "yml"]);
export type StrategyFormat = z.infer<typeof StrategyFormat>;
/** The syntax a strategy file was read as (`.yml` is read as yaml). */
export const SourceFormat = z.enum(["json", "jsonc", "yaml"]);
export type SourceFormat = z.infer<typeof SourceFormat>;

/** One problem in a strategy file: where (file, path, line, column) and what was expected. */
export const StrategyIssue = z.object({
  file: z.string().optional(),
  /** e.g. `agents.a.colour`, `flow.steps[2].agent`; "" for the whole file. */
  path: z.string(),
  message: z.string(),
  line: z.number().int().optional(),
  column: z.number().int().optional(),
});
export type StrategyIssue = z.infer<typeof StrategyIssue>;

/** Something accepted but not (yet) acted on, e.g. `agents.a.mcpServers`. */
export const StrategyWarning = StrategyIssue.omit({ file: true });
export type StrategyWarning = z.infer<typeof StrategyWarning>;

export const StrategySource = z.enum(["cwd", "comma", "home", "manifest", "bundled"]);
export type StrategySource = z.infer<typeof StrategySource>;

export const StrategyEntry = z.object({
  id: z.string(),
  name: z.string(),
  description: z.string().optional(),
  path: z.string(),
  source: StrategySource,
  valid: z.boolean(),
  error: z.string().optional(),
  warnings: z.array(StrategyWarning),
});
export type StrategyEntry = z.infer<typeof StrategyEntry>;

export const FlowGraphNode = z.object({
  /** The step's path in the file: `flow`, `flow.steps.1`, `flow.steps.1.steps.0`, `flow.observer`. */
  id: z.string(),
  kind: z.enum(["agent", "sequential", "broadcast", "cycle", "custom"]),
  agent: z.string().optional(),
  label: z.string(),
  /** The flow node that contains this one. */
  parent: z.string().optional(),
});
export type FlowGraphNode = z.infer<typeof FlowGraphNode>;
export const FlowGraphEdge = z.object({
  from: z.string(),
  to: z.string(),
  kind: z.enum(["next", "fanout", "fanin", "loop", "observe"]),
});
export type FlowGraphEdge = z.infer<typeof FlowGraphEdge>;
export type FlowGraph = { nodes: FlowGraphNode[]; edges: FlowGraphEdge[] };

const dir = z.string().min(1, "expected a non-empty directory path");
export const ListStrategiesInput = z.object({ cwd: dir.optional(), manifestPath: z.string().min(1).optional() }).strict();
export type ListStrategiesInput = z.infer<typeof ListStrategiesInput>;

export const GetStrategyInput = z
  .object({ path: z.string().min(1).optional(), id: z.string().min(1).optional(), cwd: dir.optional(), manifestPath: z.string().min(1).optional() })
  .strict()
  .refine((v) => (v.path === undefined) !== (v.id === undefined), { message: "give either path or id", path: ["path"] });
export type GetStrategyInput = z.infer<typeof GetStrategyInput>;

export const ValidateStrategyInput = z.union([
  z.object({ text: z.string().max(1_000_000), format: StrategyFormat, fileName: z.string().min(1).optional() }).strict(),
  z.object({ path: z.string().min(1), cwd: dir.optional() }).strict(),
]);
export type ValidateStrategyInput = z.infer<typeof ValidateStrategyInput>;
