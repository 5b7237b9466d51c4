import type { z } from "zod";
import { BUILT_IN_AGENT_TYPES, BUILT_IN_FLOW_TYPES } from "../../shared/strategy";

/**
 * Custom flow and agent types. A strategy may use `type: <name>` for a registered name; the
 * validator checks the name and, when the definition has one, validates `config` with its schema.
 * How a custom type runs is the runner's business: it keeps what it needs in `T`.
 */
export type StrategyTypeDefinition = {
  description?: string;
  /** Validates the step's or agent's `config` (called with undefined when it has none). */
  config?: z.ZodType;
};

export class StrategyTypeRegistry<T extends StrategyTypeDefinition = StrategyTypeDefinition> {
  private readonly flows = new Map<string, T>();
  private readonly agents = new Map<string, T>();

  /** Registers a flow type; returns a function that unregisters it. */
  registerFlowType(name: string, definition: T): () => void {
    return register(this.flows, "flow", BUILT_IN_FLOW_TYPES, name, definition);
  }

  /** Registers an agent type; returns a function that unregisters it. */
  registerAgentType(name: string, definition: T): () => void {
    return register(this.agents, "agent", BUILT_IN_AGENT_TYPES, name, definition);
  }

  flowType(name: string): T | undefined {
    return this.flows.get(name);
  }

  agentType(name: string): T | undefined {
    return this.agents.get(name);
  }

  /** Built-in names first, then registered ones, for "known: ..." messages. */
  flowTypeNames(): string[] {
    return [...BUILT_IN_FLOW_TYPES, ...[...this.flows.keys()].sort()];
  }

  agentTypeNames(): string[] {
    return [...BUILT_IN_AGENT_TYPES, ...[...this.agents.keys()].sort()];
  }
}

function register<T>(map: Map<string, T>, kind: string, builtIn: readonly string[], name: string, definition: T): () => void {
  if (!/^[A-Za-z][\w-]*$/.test(name)) throw new Error(`Invalid ${kind} type name "${name}": use letters, digits, "_" or "-".`);
  if (builtIn.includes(name)) throw new Error(`"${name}" is a built-in ${kind} type and cannot be registered.`);
  if (map.has(name)) throw new Error(`The ${kind} type "${name}" is already registered.`);
  map.set(name, definition);
  return () => {
    if (map.get(name) === definition) map.delete(name);
  };
}

/** The process-wide registry the loader uses unless given another. */
export const strategyTypes = new StrategyTypeRegistry();

export function registerFlowType(name: string, definition: StrategyTypeDefinition = {}): () => void {
  return strategyTypes.registerFlowType(name, definition);
}

export function registerAgentType(name: string, definition: StrategyTypeDefinition = {}): () => void {
  return strategyTypes.registerAgentType(name, definition);
}
