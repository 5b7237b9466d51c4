import type { ToolSet } from "ai";
import { BUILT_IN_TOOLS, TOOL_ALIASES, type BuiltInTool } from "../../shared/strategy";
import { askQuestionTools } from "./ask-question";
import { readFileTools } from "./fs-read";
import { writeFileTools } from "./fs-write";
import { runCommandTools } from "./run-command";
import { searchTools } from "./search";
import type { ToolContext } from "./tool-context";

/**
 * The built-in tools an agent lists in its strategy, as an AI SDK ToolSet. Tools are offered under
 * their canonical names (`read` -> read_file, `grep` -> search_files); names not implemented yet
 * (todo, apply_patch, webfetch) or unknown are left out with a warning.
 */

export type BuiltTools = { tools: ToolSet; warnings: string[] };

export const NOT_IMPLEMENTED_TOOLS = ["todo", "apply_patch", "webfetch"] as const satisfies readonly BuiltInTool[];

function canonical(name: string): BuiltInTool | undefined {
  if (name in TOOL_ALIASES) return TOOL_ALIASES[name as keyof typeof TOOL_ALIASES];
  return (BUILT_IN_TOOLS as readonly string[]).includes(name) ? (name as BuiltInTool) : undefined;
}

/** Every implemented tool, built for one context. */
function allTools(ctx: ToolContext): ToolSet {
  return { ...readFileTools(ctx), ...searchTools(ctx), ...writeFileTools(ctx), ...runCommandTools(ctx), ...askQuestionTools(ctx) };
}

export function buildTools(names: readonly string[], ctx: ToolContext): BuiltTools {
  const available = allTools(ctx);
  const tools: ToolSet = {};
  const warnings: string[] = [];
  for (const name of names) {
    const id = canonical(name);
    const built = id ? available[id] : undefined;
    if (id && built) tools[id] = built;
    else if (id) warnings.push(`tool "${name}" is not implemented yet; agent "${ctx.agentName}" runs without it`);
    else warnings.push(`unknown tool "${name}" ignored for agent "${ctx.agentName}" (known: ${BUILT_IN_TOOLS.join(", ")})`);
  }
  return { tools, warnings: [...new Set(warnings)] };
}
