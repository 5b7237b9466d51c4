import type { AgentStreamEvent } from "../../../shared/agents";
import { promptArg } from "./prompt-arg";
import { toolPermissions } from "./tool-permissions";
import type { CommandLine, LaunchSpec, LineParser, ProviderAdapter } from "./types";

/**
 * The fallback for CLIs without a dedicated parser: every plain line is text. A JSON object is
 * read best-effort: an `error` event or field becomes a warning, a user-role message (the CLI
 * echoing its input) stays raw, a text-like field (text, content, message, result) becomes text,
 * anything else stays raw. Completion then rests on signal.json and the exit code.
 */
const TEXT_FIELDS = ["text", "content", "message", "result"] as const;

function objectEvent(v: Record<string, unknown>, line: string): AgentStreamEvent {
  if (v.type === "error" || typeof v.error === "string") {
    const message = typeof v.message === "string" ? v.message : typeof v.error === "string" ? v.error : line;
    return { kind: "error", message, fatal: false };
  }
  if (v.role === "user") return { kind: "raw", text: line };
  for (const key of TEXT_FIELDS) {
    const value = v[key];
    if (typeof value === "string") return { kind: "text", text: value };
  }
  return { kind: "raw", text: line };
}

export class GenericLineParser implements LineParser {
  parseLine(line: string): AgentStreamEvent[] {
    const trimmed = line.trim();
    if (trimmed === "") return [];
    if (!trimmed.startsWith("{")) return [{ kind: "text", text: line }];
    let v: unknown;
    try {
      v = JSON.parse(trimmed);
    } catch {
      return [{ kind: "text", text: line }];
    }
    if (typeof v !== "object" || v === null || Array.isArray(v)) return [{ kind: "raw", text: line }];
    return [objectEvent(v as Record<string, unknown>, line)];
  }
}

export interface GenericPreset {
  name: string;
  displayName: string;
  command: string;
  /** The flag that carries the prompt (`--message`), or null for a positional prompt. */
  promptFlag: string | null;
  /** Arguments before the prompt (subcommands, output format, non-interactive switches). */
  args: string[];
  /** Extra arguments per permission mode. */
  permissionArgs?: Partial<Record<LaunchSpec["permissionMode"], string[]>>;
  modelFlag?: string;
  parser?: () => LineParser;
  structuredOutput?: boolean;
  /** Resume by a session flag (`--resume <id>`) when the CLI has one. */
  resumeFlag?: string;
  env?: (spec: LaunchSpec) => Record<string, string>;
  /** Arguments before the prompt that depend on the spec (the switchyard MCP server's config file). */
  specArgs?: (spec: LaunchSpec) => string[];
  /** Files the CLI reads, written before it starts (the MCP config `LaunchSpec.mcpServer.configPath`). */
  prepare?: (spec: LaunchSpec) => Promise<void>;
  /** What `ask` does with this CLI (none of these can route an approval to a human). */
  askMeans?: string;
}

const ASK_DEFAULT = "It cannot route approvals to you: it runs with its own default permissions.";

/** An adapter from a preset: `<command> <args> <permission args> <spec args> [model] [resume] <prompt>`. */
export function makeGenericProvider(p: GenericPreset): ProviderAdapter {
  return {
    name: p.name,
    displayName: p.displayName,
    defaultCommand: p.command,
    promptMode: p.promptFlag ? "flag" : "argument",
    resumeStyle: p.resumeFlag ? "flag" : "none",
    structuredOutput: p.structuredOutput ?? false,
    canSteer: false,
    choosesSessionId: false,
    buildCommand(spec, command): CommandLine {
      const args = [...p.args, ...(p.permissionArgs?.[spec.permissionMode] ?? []), ...(p.specArgs?.(spec) ?? [])];
      if (spec.model && p.modelFlag) args.push(p.modelFlag, spec.model);
      if (spec.resumeSessionId && p.resumeFlag) args.push(p.resumeFlag, spec.resumeSessionId);
      if (p.promptFlag) args.push(p.promptFlag);
      args.push(promptArg(spec.prompt));
      return { command, args, env: p.env?.(spec) ?? {} };
    },
    ...(p.prepare ? { prepare: p.prepare } : {}),
    createParser: p.parser ?? (() => new GenericLineParser()),
    // no approval ever reaches Switchyard from these CLIs: every tool counts as running something
    permissionOf: toolPermissions({ write: [], read: [] }),
    approvals: { human: false, askMeans: p.askMeans ?? ASK_DEFAULT },
  };
}
