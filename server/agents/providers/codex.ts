import { mkdir, writeFile } from "node:fs/promises";
import { dirname, join } from "node:path";
import { copySessionFiles } from "../session-transfer";
import { CodexParser } from "./codex-parser";
import { toolPermissions } from "./tool-permissions";
import type { AccountSupport, CommandLine, LaunchSpec, ProviderAdapter } from "./types";

/**
 * Codex: `codex exec --json`. It ignores OPENAI_BASE_URL, so each agent gets its own CODEX_HOME
 * with a config.toml naming the endpoint (the key comes from OPENAI_API_KEY in the environment).
 */

const TOML_ESCAPES: Record<string, string> = { '"': '\\"', "\\": "\\\\", "\b": "\\b", "\t": "\\t", "\n": "\\n", "\f": "\\f", "\r": "\\r" };

/** A TOML basic string: quotes, backslashes and control characters escaped; lone surrogates replaced. */
export function tomlString(value: string): string {
  let out = "";
  for (const ch of value) {
    const code = ch.codePointAt(0) ?? 0;
    const known = TOML_ESCAPES[ch];
    if (known) out += known;
    else if (code < 0x20 || code === 0x7f) out += `\\u${code.toString(16).padStart(4, "0")}`;
    else if (code >= 0xd800 && code <= 0xdfff) out += "\ufffd"; // a lone surrogate: not a Unicode scalar value
    else out += ch;
  }
  return `"${out}"`;
}

/**
 * `<CODEX_HOME>/config.toml`: the model, the Switchyard endpoint as the model provider (its
 * Responses API under /v1) when one is configured, analytics off. Top-level keys come before
 * the tables, as TOML requires.
 */
export function codexConfigToml(spec: LaunchSpec): string {
  const lines: string[] = [];
  if (spec.model) lines.push(`model = ${tomlString(spec.model)}`);
  if (spec.endpoints.openaiBaseUrl) {
    const root = spec.endpoints.openaiBaseUrl.replace(/\/+$/, "").replace(/\/v1$/, "");
    lines.push(
      `model_provider = "switchyard"`,
      "",
      "[model_providers.switchyard]",
      `name = "Switchyard endpoint"`,
      `base_url = ${tomlString(`${root}/v1`)}`,
      `env_key = "OPENAI_API_KEY"`,
      `wire_api = "responses"`,
    );
  }
  if (spec.mcpServer) {
    // the plain /mcp: an account's CODEX_HOME is shared by its agents; the token says which agent it is.
    // Its tools approved: `codex exec` cannot ask, and refuses them in acceptEdits/ask otherwise; the
    // agent's token bounds what they may do (as claude's allow rule mcp__switchyard)
    lines.push("", `[mcp_servers.${spec.mcpServer.serverName}]`, `url = ${tomlString(spec.mcpServer.sharedUrl)}`, `bearer_token_env_var = ${tomlString(spec.mcpServer.tokenEnv)}`, `default_tools_approval_mode = "approve"`);
  }
  lines.push("", "[analytics]", "enabled = false", "");
  return lines.join("\n");
}

/**
 * What the workspace-write sandbox must also let an agent write so it can commit on its branch.
 * The sandbox mounts a worktree's `.git` pointer and the git dir it names read-only, and the
 * common git dir lies outside the workspace. Listing the whole common dir would let an agent
 * write hooks (run later outside the sandbox) or move other branches; so only: the worktree's
 * own git dir (index, HEAD), the object store, and the folders of the agent's branch ref and
 * its reflog (`refs/heads/switchyard/`). Hooks, config and `main` stay read-only.
 */
export function codexCommitRoots(spec: LaunchSpec): string[] {
  if (!spec.git) return [];
  const { gitDir, commonDir, branch } = spec.git;
  const refFolder = dirname(branch);
  if (refFolder === ".") return []; // a branch at the top of refs/heads: its folder holds every branch
  return [gitDir, join(commonDir, "objects"), join(commonDir, "refs", "heads", refFolder), join(commonDir, "logs", "refs", "heads", refFolder)];
}

/**
 * bypass: no sandbox, no approvals. acceptEdits and ask: the workspace-write sandbox, plus the
 * git folders a commit needs (codexCommitRoots). `codex exec` never prompts (it has no
 * interactive approvals and no permission-prompt tool), so `ask` cannot route approvals to a
 * human: it falls back to the same sandbox as acceptEdits.
 */
function sandboxArgs(spec: LaunchSpec, resume: boolean): string[] {
  if (spec.permissionMode === "bypass") return ["--dangerously-bypass-approvals-and-sandbox"];
  const roots = codexCommitRoots(spec);
  const extra = roots.length > 0 ? ["-c", `sandbox_workspace_write.writable_roots=[${roots.map(tomlString).join(", ")}]`] : [];
  // `exec resume` has no --sandbox flag (codex 0.169 `exec resume --help`): the same setting through -c
  return resume ? ["-c", 'sandbox_mode="workspace-write"', ...extra] : ["--sandbox", "workspace-write", ...extra];
}

/**
 * Spawn: `codex exec <options> -C <cwd> -- <prompt>`; resume: `codex exec resume <options> --
 * <thread id> <prompt>` (resume takes no -C: it runs in the process cwd). The `--` keeps a prompt
 * that starts with a dash from being read as an option (clap refuses it otherwise). `--disable
 * plugins` keeps all traffic on the configured endpoint.
 */
export function codexArgs(spec: LaunchSpec): string[] {
  const common = ["--json", "--skip-git-repo-check", "--disable", "plugins", ...(spec.model ? ["--model", spec.model] : [])];
  if (spec.resumeSessionId) return ["exec", "resume", ...common, ...sandboxArgs(spec, true), "--", spec.resumeSessionId, spec.prompt];
  return ["exec", ...common, ...sandboxArgs(spec, false), "-C", spec.cwd, "--", spec.prompt];
}

/**
 * Codex accounts are API keys, in the env as OPENAI_API_KEY (the config.toml `prepare` writes into
 * the account's CODEX_HOME names it as the endpoint's key); a session moves as its
 * `sessions/YYYY/MM/DD/rollout-<time>-<thread id>.jsonl`.
 */
const codexAccounts: AccountSupport = {
  kinds: ["api-key"],
  kindsText: "API keys (OPENAI_API_KEY)",
  materialize: async (_configDir, c) => ({ env: { OPENAI_API_KEY: c.secret }, unset: [] }),
  copySession: (fromDir, toDir, sessionId) => copySessionFiles(fromDir, toDir, sessionId),
};

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
    return { command, args: codexArgs(spec), env: { CODEX_HOME: spec.configDir } };
  },
  async prepare(spec) {
    await mkdir(spec.configDir, { recursive: true });
    await writeFile(join(spec.configDir, "config.toml"), codexConfigToml(spec));
  },
  createParser: () => new CodexParser(),
  permissionOf: toolPermissions({ write: ["apply_patch", "file_change"], read: [] }),
  // see sandboxArgs: `codex exec` has no approvals to route
  approvals: { human: false, askMeans: "codex exec cannot ask: it works in its workspace-write sandbox, as with Accept edits." },
  accounts: codexAccounts,
};
