import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import { join } from "node:path";
import type { z } from "zod";
import { REPO_ROOT } from "../paths";
import type { Tool } from "../mcp/tool-kit";

/** Test support for the MCP server: the SDK's own client over HTTP and over the stdio entry. */

export async function connectHttp(url: string, opts: { path?: string; token?: string } = {}): Promise<Client> {
  const client = new Client({ name: "switchyard-test", version: "1" });
  const headers: Record<string, string> = opts.token ? { authorization: `Bearer ${opts.token}` } : {};
  await client.connect(new StreamableHTTPClientTransport(new URL(`${url}${opts.path ?? "/mcp"}`), { requestInit: { headers } }));
  // the client caches each tool's output schema from tools/list and validates structuredContent with it
  await client.listTools();
  return client;
}

/** `yard mcp --url URL` (the real command, from the sources) as the MCP client's child process. */
export async function connectStdio(url: string, opts: { token?: string; agentId?: string; cwd?: string } = {}): Promise<{ client: Client; stderr: () => string }> {
  const args = [join(REPO_ROOT, "bin", "yard.mjs"), "mcp", "--url", url];
  if (opts.token) args.push("--token", opts.token);
  if (opts.agentId) args.push("--agent-id", opts.agentId);
  const env: Record<string, string> = {};
  for (const [k, v] of Object.entries(process.env)) if (v !== undefined && !k.startsWith("SWITCHYARD_")) env[k] = v;
  env.SWITCHYARD_FROM_SOURCE = "1";
  const transport = new StdioClientTransport({ command: process.execPath, args, env, cwd: opts.cwd ?? REPO_ROOT, stderr: "pipe" });
  let err = "";
  transport.stderr?.on("data", (d: Buffer) => (err += d.toString()));
  const client = new Client({ name: "switchyard-test", version: "1" });
  await client.connect(transport);
  await client.listTools();
  return { client, stderr: () => err };
}

/** Call a tool that must succeed: its structuredContent, checked against the tool's zod output schema too. */
export async function call<O extends z.ZodObject>(client: Client, tool: Tool<z.ZodObject, O>, args: Record<string, unknown> = {}, onProgress?: () => void): Promise<z.output<O>> {
  const r = (await client.callTool({ name: tool.name, arguments: args }, undefined, onProgress ? { onprogress: onProgress } : undefined)) as CallToolResult;
  if (r.isError) throw new Error(`${tool.name} failed: ${textOf(r)}`);
  if (!textOf(r)) throw new Error(`${tool.name} returned no text`);
  return tool.output.parse(r.structuredContent);
}

/** Call a tool that must fail: its error text ("CODE: message"). */
export async function callError(client: Client, name: string, args: Record<string, unknown> = {}): Promise<string> {
  const r = (await client.callTool({ name, arguments: args })) as CallToolResult;
  if (!r.isError) throw new Error(`${name} was expected to fail; it answered ${JSON.stringify(r.structuredContent)}`);
  if (r.structuredContent !== undefined) throw new Error(`${name}: an error carries no structuredContent`);
  return textOf(r);
}

export function textOf(r: CallToolResult): string {
  return r.content.map((c) => (c.type === "text" ? c.text : "")).join("");
}
