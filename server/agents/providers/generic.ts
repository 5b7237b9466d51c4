import type { AgentStreamEvent } from "../../../shared/agents";
import type { CommandLine, LaunchSpec, LineParser, ProviderAdapter } from "./types";

/**
 * The fallback for CLIs without a dedicated parser: every line is text; a JSON object with a
 * text-like field is read best-effort; anything else stays raw. Completion then rests on
 * signal.json and the exit code.
 */
export class GenericLineParser implements LineParser {
  parseLine(line: string): AgentStreamEvent[] {
    const trimmed = line.trim();
    if (trimmed === "") return [];
    if (!trimmed.startsWith("{")) return [{ kind: "text", text: line }];
    try {
      const v = JSON.parse(trimmed) as Record<string, unknown>;
      for (const key of ["text", "content", "message", "result"]) {
        if (typeof v[key] === "string") return [{ kind: "text", text: v[key] as string }];
      }
      return [{ kind: "raw", text: line }];
    } catch {
      return [{ kind: "text", text: line }];
    }
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
}

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
      const args = [...p.args, ...(p.permissionArgs?.[spec.permissionMode] ?? [])];
      if (spec.model && p.modelFlag) args.push(p.modelFlag, spec.model);
      if (spec.resumeSessionId && p.resumeFlag) args.push(p.resumeFlag, spec.resumeSessionId);
      if (p.promptFlag) args.push(p.promptFlag, spec.prompt);
      else args.push(spec.prompt);
      return { command, args, env: p.env?.(spec) ?? {} };
    },
    createParser: p.parser ?? (() => new GenericLineParser()),
  };
}
