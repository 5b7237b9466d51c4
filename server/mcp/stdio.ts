import { StdioServerTransport } from "@modelcontextprotocol/sdk/server/stdio.js";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import type { Readable, Writable } from "node:stream";
import { createSwitchyardClient, defaultUrl } from "../client";
import { REPO_ROOT } from "../paths";
import { createSwitchyardMcp } from "./mcp-server";

/**
 * `yard mcp`: the `switchyard` MCP server on stdio, for clients that launch their servers
 * (Claude Code, Codex, Claude Desktop...). It talks to a running Switchyard server over the typed
 * tRPC client with `url` + `token`; the same tools as `/mcp`, except `approve` (the permission
 * prompt of a claude agent in `ask` mode, served on `/mcp/agents/:id`). One session for the life
 * of the process, so it offers resource subscriptions (over the client's tRPC subscriptions,
 * subscriptions.ts). Nothing but the protocol is written to stdout; notes go to stderr.
 */

export type StdioMcpOptions = {
  /** The server (default: SWITCHYARD_URL, else SWITCHYARD_HOST/PORT, else http://127.0.0.1:7422). */
  url?: string;
  /** Its token (default: SWITCHYARD_TOKEN). */
  token?: string;
  /** Speak for this agent: `ask` and `pending_questions` default to it (default: SWITCHYARD_AGENT_ID, set inside agents). */
  agentId?: string;
  /** Where relative strategies, run cwds and spawn repos default to (default: this process's cwd). */
  cwd?: string;
  stdin?: Readable;
  stdout?: Writable;
  stderr?: Writable;
};

export type StdioMcp = {
  /** Resolves when the client goes away (stdin ends) or close() is called. */
  readonly closed: Promise<void>;
  close(): Promise<void>;
};

export async function startStdioMcp(options: StdioMcpOptions = {}): Promise<StdioMcp> {
  const url = (options.url ?? defaultUrl()).replace(/\/+$/, "");
  const token = options.token ?? (process.env.SWITCHYARD_TOKEN || undefined);
  const agentId = options.agentId ?? (process.env.SWITCHYARD_AGENT_ID || undefined);
  const stdin = options.stdin ?? process.stdin;
  const stderr = options.stderr ?? process.stderr;
  const yard = createSwitchyardClient({ url, ...(token ? { token } : {}) });
  const server = createSwitchyardMcp({ yard, version: packageVersion(), cwd: options.cwd ?? process.cwd(), subscriptions: {}, ...(agentId ? { agentId } : {}) });
  const transport = new StdioServerTransport(stdin, options.stdout ?? process.stdout);
  let finish!: () => void;
  const closed = new Promise<void>((resolve) => (finish = resolve));
  transport.onclose = () => finish();
  const close = async () => {
    await server.close().catch(() => {});
    finish();
  };
  stdin.once("end", () => void close());
  stdin.once("close", () => void close());
  await server.connect(transport);
  yard.health.query().then(
    () => stderr.write(`switchyard MCP server on stdio, talking to ${url}\n`),
    (err: unknown) => stderr.write(`switchyard MCP: ${url} does not answer yet (${(err as Error).message}); tools will fail until it does\n`),
  );
  return { closed, close };
}

/** Serve until the client goes away: what `yard mcp` runs. */
export async function runStdioMcp(options: StdioMcpOptions = {}): Promise<void> {
  const session = await startStdioMcp(options);
  await session.closed;
}

function packageVersion(): string {
  try {
    return (JSON.parse(readFileSync(join(REPO_ROOT, "package.json"), "utf8")) as { version: string }).version;
  } catch {
    return "0";
  }
}
