import { mkdtempSync, realpathSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { ToolSet } from "ai";
import { PermissionPolicy } from "../tools/policy";
import type { MutationNotice, PermissionRequest, QuestionRequest, ToolCallNotice, ToolContext } from "../tools/tool-context";
import { buildTools } from "../tools/tools";

/** Test support for the tool tests: a temp workspace and a context that records what the engine would see. */

export type Recorded = {
  events: Array<{ kind: "permission"; request: PermissionRequest } | { kind: "question"; request: QuestionRequest } | { kind: "tool-call"; call: ToolCallNotice }>;
  mutations: MutationNotice[];
};

export function tempWorkspace(prefix = "yard-tools-"): string {
  return realpathSync(mkdtempSync(join(tmpdir(), prefix)));
}

export function testContext(cwd: string, options: Partial<ToolContext> & { answer?: "allow" | "deny"; reply?: string } = {}): ToolContext & { recorded: Recorded } {
  const { answer, reply, ...overrides } = options;
  const recorded: Recorded = { events: [], mutations: [] };
  return {
    cwd,
    agentName: "tester",
    signal: new AbortController().signal,
    policy: new PermissionPolicy(cwd),
    requestPermission: async (request) => {
      recorded.events.push({ kind: "permission", request });
      return answer ?? "allow";
    },
    askQuestion: async (request) => {
      recorded.events.push({ kind: "question", request });
      return reply ?? "yes";
    },
    onToolCall: (call) => recorded.events.push({ kind: "tool-call", call }),
    onMutation: (mutation) => recorded.mutations.push(mutation),
    ...overrides,
    recorded,
  };
}

let nextId = 0;

/** Runs one tool's execute as the AI SDK would. */
export async function callTool(tools: ToolSet, name: string, input: unknown, signal?: AbortSignal): Promise<string> {
  const execute = tools[name]?.execute;
  if (!execute) throw new Error(`no tool ${name}`);
  const result = await execute(input as never, { toolCallId: `call_${++nextId}`, messages: [], abortSignal: signal });
  return result as string;
}

/** buildTools + callTool in one step. */
export function toolRunner(ctx: ToolContext, names: string[]) {
  const { tools } = buildTools(names, ctx);
  return (name: string, input: unknown, signal?: AbortSignal) => callTool(tools, name, input, signal);
}
