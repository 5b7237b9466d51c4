import type { z } from "zod";
import {
  AgentStep,
  BroadcastFlowFields,
  BUILT_IN_AGENT_TYPES,
  BUILT_IN_FLOW_TYPES,
  CustomFlowFields,
  CycleFlowFields,
  SequentialFlowFields,
  Strategy,
  StrategyFields,
  agentSchemaFor,
  describeValue,
} from "../../shared/strategy";
import { commandGlob, GlobError } from "../tools/globs";
import { strategyTypes, type StrategyTypeRegistry } from "./registry";

/**
 * Validates a parsed strategy file (any JS value) and reports every problem with its path. The
 * walk goes level by level, choosing each agent's and flow's schema by its `type`, so that a
 * mistake deep in the tree is named exactly (`flow.steps[2].steps[0].agent`), not drowned in a
 * union error. Then the cross-checks: agent references, observers, registered types.
 */

export type PathSegment = string | number;
export type PathIssue = { path: PathSegment[]; message: string };
export type ValidationResult = { strategy?: Strategy; issues: PathIssue[]; warnings: PathIssue[] };

/** Deeper than this is surely a mistake (or a YAML alias loop). */
export const MAX_FLOW_DEPTH = 32;

const FLOW_FIELDS: Record<string, z.ZodType> = {
  sequential: SequentialFlowFields,
  broadcast: BroadcastFlowFields,
  cycle: CycleFlowFields,
};

type Dict = Record<string, unknown>;
const isDict = (value: unknown): value is Dict => typeof value === "object" && value !== null && !Array.isArray(value);

class Walk {
  readonly issues: PathIssue[] = [];
  readonly warnings: PathIssue[] = [];
  agentNames: string[] = [];

  constructor(readonly registry: StrategyTypeRegistry) {}

  issue(path: PathSegment[], message: string): void {
    this.issues.push({ path, message });
  }

  warn(path: PathSegment[], message: string): void {
    this.warnings.push({ path, message });
  }

  /** Checks `value` with `schema`, recording its issues under `path`. */
  check(schema: z.ZodType, value: unknown, path: PathSegment[]): boolean {
    const result = schema.safeParse(value);
    if (!result.success) this.issues.push(...zodIssues(result.error, path));
    return result.success;
  }

  ref(name: unknown, path: PathSegment[]): void {
    if (typeof name !== "string" || name === "" || this.agentNames.includes(name)) return;
    const defined = this.agentNames.length ? this.agentNames.join(", ") : "none";
    this.issue(path, `unknown agent ${JSON.stringify(name)} (defined: ${defined})`);
  }
}

export function validateStrategy(input: unknown, registry: StrategyTypeRegistry = strategyTypes): ValidationResult {
  const walk = new Walk(registry);
  walk.check(StrategyFields, input, []);
  if (!isDict(input)) return { issues: walk.issues, warnings: [] };
  if (isDict(input.agents)) {
    walk.agentNames = Object.keys(input.agents);
    for (const [name, agent] of Object.entries(input.agents)) checkAgent(walk, name, agent);
  }
  if (isDict(input.flow)) checkFlow(walk, input.flow, ["flow"], 1);
  checkCommandPatterns(walk, input.permissions);
  if (walk.issues.length > 0) return { issues: walk.issues, warnings: walk.warnings };

  // The walk passed, so the whole-tree schema should too; it gives the typed result.
  const parsed = Strategy.safeParse(input);
  if (!parsed.success) return { issues: zodIssues(parsed.error, []), warnings: walk.warnings };
  return { strategy: parsed.data, issues: [], warnings: walk.warnings };
}

function checkAgent(walk: Walk, name: string, agent: unknown): void {
  const path = ["agents", name];
  if (name.trim() === "") walk.issue(path, "agent names must not be empty");
  if (!isDict(agent)) return walk.issue(path, `expected an agent map (e.g. {model: "provider/model"}), got ${describeValue(agent)}`);
  const type = agent.type;
  const known = walk.registry.agentTypeNames().join(", ");
  if (type !== undefined && typeof type !== "string") {
    return walk.issue([...path, "type"], `expected an agent type (${known}), got ${describeValue(type)}`);
  }
  const custom = type !== undefined && !(BUILT_IN_AGENT_TYPES as readonly string[]).includes(type);
  const definition = custom ? walk.registry.agentType(type) : undefined;
  if (custom && !definition) return walk.issue([...path, "type"], `unknown agent type ${JSON.stringify(type)} (known: ${known})`);

  walk.check(agentSchemaFor(type), agent, path);
  if (definition?.config) walk.check(definition.config, agent.config, [...path, "config"]);
  if (type === undefined || type === "llm") warnUnimplemented(walk, agent, path);
}

/** `permissions.run_command.ask` patterns are globs: one that does not parse is an issue at load, not a surprise later. */
function checkCommandPatterns(walk: Walk, permissions: unknown): void {
  if (!isDict(permissions) || !isDict(permissions.run_command) || !Array.isArray(permissions.run_command.ask)) return;
  permissions.run_command.ask.forEach((pattern, i) => {
    if (typeof pattern !== "string" || pattern === "") return;
    try {
      commandGlob(pattern);
    } catch (err) {
      if (!(err instanceof GlobError)) throw err;
      walk.issue(["permissions", "run_command", "ask", i], err.message);
    }
  });
}

/** Accepted keys that nothing acts on yet: said out loud, never ignored silently. */
function warnUnimplemented(walk: Walk, agent: Dict, path: PathSegment[]): void {
  if (agent.mcpServers !== undefined) walk.warn([...path, "mcpServers"], "MCP servers are accepted but not run yet");
  if (agent.skills !== undefined) walk.warn([...path, "skills"], "skills are accepted but not loaded yet");
  if (isDict(agent.context) && agent.context.compaction !== undefined) {
    walk.warn([...path, "context", "compaction"], "context compaction is accepted but not applied yet");
  }
}

function checkFlow(walk: Walk, flow: Dict, path: PathSegment[], depth: number): void {
  if (depth > MAX_FLOW_DEPTH) return walk.issue(path, `flows nest too deeply (more than ${MAX_FLOW_DEPTH} levels)`);
  const type = flow.type;
  const known = walk.registry.flowTypeNames().join(", ");
  if (typeof type !== "string") {
    const message = `expected a flow type (${known})`;
    walk.issue([...path, "type"], type === undefined ? `required: ${message}` : `${message}, got ${describeValue(type)}`);
  } else if ((BUILT_IN_FLOW_TYPES as readonly string[]).includes(type)) {
    walk.check(FLOW_FIELDS[type] as z.ZodType, flow, path);
  } else {
    const definition = walk.registry.flowType(type);
    if (!definition) walk.issue([...path, "type"], `unknown flow type ${JSON.stringify(type)} (known: ${known})`);
    else {
      walk.check(CustomFlowFields, flow, path);
      if (definition.config) walk.check(definition.config, flow.config, [...path, "config"]);
    }
  }
  if (type === "cycle") walk.ref(flow.observer, [...path, "observer"]);
  if (!Array.isArray(flow.steps)) return;
  flow.steps.forEach((step, i) => checkStep(walk, step, [...path, "steps", i], depth));
}

function checkStep(walk: Walk, step: unknown, path: PathSegment[], depth: number): void {
  if (!isDict(step)) {
    return walk.issue(path, `expected a step ({agent: name}) or a nested flow ({type, steps}), got ${describeValue(step)}`);
  }
  if (!("agent" in step)) return checkFlow(walk, step, path, depth + 1);
  if ("type" in step || "steps" in step) {
    return walk.issue(path, "a step is either {agent: name} or a nested flow {type, steps}, not both");
  }
  walk.check(AgentStep, step, path);
  walk.ref(step.agent, [...path, "agent"]);
}

/** zod issues as path issues; an object's unknown keys become one issue per key, at the key. */
export function zodIssues(error: z.ZodError, prefix: PathSegment[]): PathIssue[] {
  return error.issues.flatMap((issue) => {
    const path = [...prefix, ...issue.path.map((seg) => (typeof seg === "symbol" ? String(seg) : seg))];
    if (issue.code !== "unrecognized_keys") return [{ path, message: issue.message }];
    const allowed = /\(allowed: .*\)$/.exec(issue.message)?.[0];
    return issue.keys.map((key) => ({
      path: [...path, key],
      message: `unknown key ${JSON.stringify(key)}${allowed ? ` ${allowed}` : ""}`,
    }));
  });
}
