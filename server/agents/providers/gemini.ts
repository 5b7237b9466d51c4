import { mkdir, readdir, readFile, rm, symlink } from "node:fs/promises";
import { homedir } from "node:os";
import { join } from "node:path";
import { makeGenericProvider } from "./generic";
import { isObject, parseJsonObject } from "./json-object";
import { writeSecretFile } from "./secret-file";
import type { LaunchSpec } from "./types";

/**
 * Gemini CLI: `gemini --output-format stream-json -p <prompt>` (headless). Its stream-json events
 * are init, message (user and assistant chunks), tool_use, tool_result, error, result: not
 * Claude's shape, so the generic parser reads them best-effort (assistant text, warnings).
 * Uncertain, from its docs and not run here: `--output-format stream-json` needs a recent
 * release; `--yolo` approves every tool and `--approval-mode auto_edit` file edits only;
 * GEMINI_CLI_TRUST_WORKSPACE=true is what other integrators set so a headless run in an
 * untrusted folder (a fresh worktree) is not refused; `--allowed-tools run_shell_command(git add)`
 * (and commit, status, diff, log) lets auto_edit commit. No resume by session id: resumeStyle none,
 * so work it leaves uncommitted is committed by Switchyard (SWITCHYARD_AGENT_AUTOCOMMIT).
 *
 * The switchyard MCP server: gemini takes no MCP config from a flag, and its system settings
 * (GEMINI_CLI_SYSTEM_SETTINGS_PATH) are skipped unless root owns them (0.61 checks), so the agent's gemini gets a
 * home of its own (GEMINI_CLI_HOME = the agent's config dir, as claude's CLAUDE_CONFIG_DIR and
 * codex's CODEX_HOME): its `.gemini/settings.json` is the user's own settings plus
 * `mcpServers.switchyard` on the agent's endpoint, `trust: true` (no confirmation: its tools act
 * within the agent's own token, as claude's allow rule) and `Authorization: Bearer
 * ${SWITCHYARD_TOKEN}`, which gemini resolves from the agent's environment when it loads its
 * settings: the file (0600) holds no token. Everything else of the user's `~/.gemini` (the login,
 * trusted folders, extensions, GEMINI.md, commands) is linked in, so the agent runs as the user's
 * gemini does; the system settings, the project's and the admin's policy apply as always.
 */
/** Shell commands a headless run may use without confirmation: what committing in its worktree needs. */
const GEMINI_GIT_ALLOW = ["add", "commit", "status", "diff", "log"].map((c) => `run_shell_command(git ${c})`);

/** The `.gemini` folder the user's gemini reads (under GEMINI_CLI_HOME, else the home directory). */
export function geminiUserDir(env: NodeJS.ProcessEnv = process.env): string {
  return join(env.GEMINI_CLI_HOME || homedir(), ".gemini");
}

/** The agent's settings: the user's (an object; `{}` when there are none) plus the switchyard server. */
export function geminiSettings(spec: LaunchSpec, user: Record<string, unknown>): Record<string, unknown> {
  const server = spec.mcpServer;
  if (!server) return user;
  const mcpServers = isObject(user.mcpServers) ? user.mcpServers : {};
  const switchyard = { httpUrl: server.url, headers: { Authorization: `Bearer \${${server.tokenEnv}}` }, trust: true };
  return { ...user, mcpServers: { ...mcpServers, [server.serverName]: switchyard } };
}

/**
 * The agent's `<configDir>/.gemini`: every entry of the user's linked but settings.json, written
 * anew at each launch (0600). User settings that are not plain JSON (gemini allows comments) are
 * linked as they are: the agent then runs without the switchyard server rather than without them.
 */
export async function prepareGemini(spec: LaunchSpec, userDir = geminiUserDir()): Promise<void> {
  if (!spec.mcpServer) return;
  const own = join(spec.configDir, ".gemini");
  await mkdir(own, { recursive: true });
  for (const entry of await readdir(userDir).catch(() => [] as string[])) {
    if (entry === "settings.json") continue;
    await symlink(join(userDir, entry), join(own, entry)).catch((e: NodeJS.ErrnoException) => {
      if (e.code !== "EEXIST") throw e;
    });
  }
  const settingsPath = join(own, "settings.json");
  // never write through a link to the user's own file
  await rm(settingsPath, { force: true });
  let raw: string | null = null;
  try {
    raw = await readFile(join(userDir, "settings.json"), "utf8");
  } catch {
    // no user settings
  }
  const user = raw === null ? {} : parseJsonObject(raw);
  if (user === null) return symlink(join(userDir, "settings.json"), settingsPath);
  await writeSecretFile(settingsPath, JSON.stringify(geminiSettings(spec, user), null, 2));
}

export const geminiProvider = makeGenericProvider({
  name: "gemini",
  displayName: "Gemini CLI",
  command: "gemini",
  promptFlag: "-p",
  args: ["--output-format", "stream-json"],
  // auto_edit approves file edits only: the git commands an agent commits with are allowed by name
  permissionArgs: { bypass: ["--yolo"], acceptEdits: ["--approval-mode", "auto_edit", "--allowed-tools", ...GEMINI_GIT_ALLOW] },
  modelFlag: "-m",
  env: (spec) => ({
    GEMINI_CLI_TRUST_WORKSPACE: "true",
    ...(spec.mcpServer ? { GEMINI_CLI_HOME: spec.configDir } : {}),
  }),
  prepare: (spec) => prepareGemini(spec),
});
