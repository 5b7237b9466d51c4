import { randomUUID } from "node:crypto";
import { join } from "node:path";
import type { AgentHost, SessionRef } from "./agent-host";
import { agentEnv } from "./agent-env";
import type { AgentRow } from "./agent-records";
import type { LaunchSpec, ProviderAdapter } from "./providers/types";

export interface LaunchInput {
  host: AgentHost;
  row: AgentRow;
  adapter: ProviderAdapter;
  command: string;
  prompt: string;
  resume: boolean;
  agentDir: string;
  serverUrl: string;
  token: string;
  baseEnv: NodeJS.ProcessEnv;
  endpoints: LaunchSpec["endpoints"];
  /** Variables the host's environment must not give the CLI (an account's: they would win). */
  unset?: string[];
}

export interface LaunchResult {
  session: number;
  /** The process run as the host started it. */
  ref: SessionRef;
  /** The session id chosen up front (claude --session-id), when the provider lets us. */
  sessionId: string | undefined;
}

/** The MCP tool agents in `ask` mode route their permission prompts to. */
export const PERMISSION_SERVER = { serverName: "switchyard", toolName: "approve" } as const;

/** Build the command of the next process run (spawn or resume) and start it on the agent's host. */
export async function launchSession(input: LaunchInput): Promise<LaunchResult> {
  const { row, adapter, host } = input;
  const session = row.sessionNumber + 1;
  const newSessionId = !input.resume && adapter.choosesSessionId ? randomUUID() : undefined;
  const gitLocations = row.workspaceKind === "worktree" && row.branch ? await host.worktreeGit(row.workspacePath, row.branch) : undefined;
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
    mcpServer: {
      url: `${input.serverUrl}/mcp/agents/${row.id}`,
      sharedUrl: `${input.serverUrl}/mcp`,
      token: input.token,
      serverName: PERMISSION_SERVER.serverName,
      configPath: join(input.agentDir, "mcp.json"),
      tokenEnv: "SWITCHYARD_TOKEN",
    },
    // only a CLI that can route its approvals to a human gets the permission server
    ...(row.permissionMode === "ask" && adapter.approvals.human
      ? { permissionServer: { url: `${input.serverUrl}/mcp/agents/${row.id}`, token: input.token, ...PERMISSION_SERVER } }
      : {}),
  };
  const { binDir } = await host.prepareLaunch({ provider: adapter.name, spec });
  const cmd = adapter.buildCommand(spec, input.command);
  const env = agentEnv({
    base: input.baseEnv,
    serverUrl: input.serverUrl,
    agentId: row.id,
    token: input.token,
    listenFile: join(input.agentDir, "listen.json"),
    binDir,
    extra: cmd.env,
  });
  const ref = await host.startSession({
    agentId: row.id,
    session,
    dir: input.agentDir,
    command: cmd.command,
    args: cmd.args,
    cwd: row.workspacePath,
    env: definedOnly(env),
    ...(input.unset?.length ? { unset: input.unset } : {}),
  });
  return { session, ref, sessionId: newSessionId };
}

/** The environment as plain strings (unset variables left out). */
function definedOnly(env: NodeJS.ProcessEnv): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(env)) if (v !== undefined) out[k] = v;
  return out;
}
