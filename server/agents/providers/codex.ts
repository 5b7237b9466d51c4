import { mkdir, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { CodexParser } from "./codex-parser";
import type { CommandLine, LaunchSpec, ProviderAdapter } from "./types";

/**
 * Codex: `codex exec --json`. It ignores OPENAI_BASE_URL, so each agent gets its own CODEX_HOME
 * with a config.toml naming the endpoint. `codex exec` has no interactive approvals: `ask` and
 * `acceptEdits` both run in the workspace-write sandbox (edits inside the worktree only).
 */

const toml = (s: string) => JSON.stringify(s); // a TOML basic string has JSON's escapes

export function codexConfigToml(spec: LaunchSpec): string {
  const lines: string[] = [];
  if (spec.model) lines.push(`model = ${toml(spec.model)}`);
  if (spec.endpoints.openaiBaseUrl) {
    const root = spec.endpoints.openaiBaseUrl.replace(/\/+$/, "").replace(/\/v1$/, "");
    lines.push(
      `model_provider = "switchyard"`,
      "",
      "[model_providers.switchyard]",
      `name = "Switchyard endpoint"`,
      `base_url = ${toml(`${root}/v1`)}`,
      `env_key = "OPENAI_API_KEY"`,
      `wire_api = "responses"`,
    );
  }
  lines.push("", "[analytics]", "enabled = false", "");
  return lines.join("\n");
}

function sandboxArgs(spec: LaunchSpec, resume: boolean): string[] {
  if (spec.permissionMode === "bypass") return ["--dangerously-bypass-approvals-and-sandbox"];
  // `exec resume` has no --sandbox flag: the same setting through -c
  return resume ? ["-c", 'sandbox_mode="workspace-write"'] : ["--sandbox", "workspace-write"];
}

export const codexProvider: ProviderAdapter = {
  name: "codex",
  displayName: "Codex",
  defaultCommand: "codex",
  promptMode: "argument",
  resumeStyle: "subcommand",
  structuredOutput: true,
  canSteer: false,
  choosesSessionId: false,
  buildCommand(spec, command): CommandLine {
    const common = ["--json", "--skip-git-repo-check", "--disable", "plugins", ...(spec.model ? ["--model", spec.model] : [])];
    const args = spec.resumeSessionId
      ? ["exec", "resume", ...common, ...sandboxArgs(spec, true), spec.resumeSessionId, spec.prompt]
      : ["exec", ...common, ...sandboxArgs(spec, false), "-C", spec.cwd, spec.prompt];
    return { command, args, env: { CODEX_HOME: spec.configDir } };
  },
  async prepare(spec) {
    await mkdir(spec.configDir, { recursive: true });
    await writeFile(join(spec.configDir, "config.toml"), codexConfigToml(spec));
  },
  createParser: () => new CodexParser(),
};
