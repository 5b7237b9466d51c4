import { randomUUID } from "node:crypto";
import { mkdirSync } from "node:fs";
import { join } from "node:path";
import { agentEnv } from "./agent-env";
import { spawnDetached, type SpawnedProcess } from "./agent-process";
import type { AgentRow } from "./agent-records";
import type { LaunchSpec, ProviderAdapter } from "./providers/types";
import { worktreeGit } from "./workspace";

export interface LaunchInput {
  row: AgentRow;
  adapter: ProviderAdapter;
  command: string;
  prompt: string;
  resume: boolean;
  agentDir: string;
  serverUrl: string;
  token: string;
  binDir: string;
  baseEnv: NodeJS.ProcessEnv;
  endpoints: LaunchSpec["endpoints"];
}

export interface LaunchResult {
  session: number;
  process: SpawnedProcess;
  /** The session id chosen up front (claude --session-id), when the provider lets us. */
  sessionId: string | undefined;
  paths: { stdout: string; stderr: string; exitCode: string };
}

/** The MCP tool agents in `ask` mode route their permission prompts to. */
export const PERMISSION_SERVER = { serverName: "switchyard", toolName: "approve" } as const;

/** Build the command of the next process run (spawn or resume) and start it detached. */
export async function launchSession(input: LaunchInput): Promise<LaunchResult> {
  const { row, adapter } = input;
  const session = row.sessionNumber + 1;
  mkdirSync(input.agentDir, { recursive: true });
  mkdirSync(row.configDir, { recursive: true });
  const newSessionId = !input.resume && adapter.choosesSessionId ? randomUUID() : undefined;
  const gitLocations = row.workspaceKind === "worktree" && row.branch ? await worktreeGit(row.workspacePath, row.branch) : undefined;
  const spec: LaunchSpec = {
    prompt: input.prompt,
    cwd: row.workspacePath,
    permissionMode: row.permissionMode as LaunchSpec["permissionMode"],
    mode: row.mode as LaunchSpec["mode"],
    configDir: row.configDir,
    endpoints: input.endpoints,
    runningAsRoot: process.getuid?.() === 0,
    ...(input.resume && row.sessionId ? { resumeSessionId: row.sessionId } : {}),
    ...(newSessionId ? { newSessionId } : {}),
    ...(row.model ? { model: row.model } : {}),
    ...(gitLocations ? { git: gitLocations } : {}),
    // only a CLI that can route its approvals to a human gets the permission server
    ...(row.permissionMode === "ask" && adapter.approvals.human
      ? { permissionServer: { url: `${input.serverUrl}/mcp/agents/${row.id}`, token: input.token, ...PERMISSION_SERVER } }
      : {}),
  };
  await adapter.prepare?.(spec);
  const cmd = adapter.buildCommand(spec, input.command);
  const paths = {
    stdout: join(input.agentDir, `session-${session}.jsonl`),
    stderr: join(input.agentDir, `session-${session}.stderr.log`),
    exitCode: join(input.agentDir, `session-${session}.exit`),
  };
  const env = agentEnv({
    base: input.baseEnv,
    serverUrl: input.serverUrl,
    agentId: row.id,
    token: input.token,
    listenFile: join(input.agentDir, "listen.json"),
    binDir: input.binDir,
    extra: cmd.env,
  });
  const proc = spawnDetached({ command: cmd.command, args: cmd.args, cwd: row.workspacePath, env, stdoutPath: paths.stdout, stderrPath: paths.stderr, exitCodePath: paths.exitCode });
  return { session, process: proc, sessionId: newSessionId, paths };
}
