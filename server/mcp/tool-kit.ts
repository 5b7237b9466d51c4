import type { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import type { RequestHandlerExtra } from "@modelcontextprotocol/sdk/shared/protocol.js";
import type { CallToolResult, ServerNotification, ServerRequest, ToolAnnotations } from "@modelcontextprotocol/sdk/types.js";
import { isTRPCClientError } from "@trpc/client";
import type { z } from "zod";
import type { SwitchyardClient } from "../client";
import { isErrorCode } from "../../shared/errors";
import { isDomainError, type ErrorCode } from "../errors";

/**
 * How a Switchyard MCP tool is written: a name, a description for the model, zod input and output
 * schemas, and `run`, which calls the typed tRPC client (in-process on `/mcp`, over HTTP from the
 * stdio server) and returns the structured result plus one short line of text. A thrown error
 * (a domain error, bad input the procedure refused, an unreachable server) becomes a tool error
 * (`isError: true`, "CODE: message"), never a protocol error or a crash.
 */

/** What every tool can reach. */
export type ToolContext = {
  yard: SwitchyardClient;
  /** The agent this server speaks for (`/mcp/agents/:id`, or a stdio server inside an agent). */
  agentId?: string;
  /** The directory relative arguments default to (the stdio client's cwd; the server's own on HTTP). */
  cwd?: string;
};

export type ToolExtra = RequestHandlerExtra<ServerRequest, ServerNotification>;

export type ToolOutcome<O extends z.ZodObject> = { data: z.input<O>; text: string };

export type ToolSpec<I extends z.ZodObject = z.ZodObject, O extends z.ZodObject = z.ZodObject> = {
  name: string;
  title: string;
  description: string;
  input: I;
  output: O;
  annotations?: ToolAnnotations;
  run(args: z.output<I>, ctx: ToolContext, extra: ToolExtra): Promise<ToolOutcome<O>>;
};

/** A tool, typed end to end; `register` puts it on an MCP server. */
export type Tool<I extends z.ZodObject = z.ZodObject, O extends z.ZodObject = z.ZodObject> = {
  readonly name: string;
  readonly input: I;
  readonly output: O;
  readonly description: string;
  register(server: McpServer, ctx: ToolContext): void;
};

export function defineTool<I extends z.ZodObject, O extends z.ZodObject>(spec: ToolSpec<I, O>): Tool<I, O> {
  return {
    name: spec.name,
    input: spec.input,
    output: spec.output,
    description: spec.description,
    register(server, ctx) {
      // registered as plain object schemas; the SDK has parsed the arguments with spec.input
      const inputSchema: z.ZodObject = spec.input;
      const outputSchema: z.ZodObject = spec.output;
      server.registerTool(
        spec.name,
        { title: spec.title, description: spec.description, inputSchema, outputSchema, ...(spec.annotations ? { annotations: spec.annotations } : {}) },
        async (args, extra): Promise<CallToolResult> => {
          try {
            const { data, text } = await spec.run(args as z.output<I>, ctx, extra);
            // parsed, so a result always matches the schema it advertises (defaults filled in)
            const structured = spec.output.parse(data) as Record<string, unknown>;
            return { content: [{ type: "text", text: clip(text, 2000) }], structuredContent: structured };
          } catch (err) {
            return toolError(err);
          }
        },
      );
    },
  };
}

export type ToolErrorInfo = { code: ErrorCode; message: string; issues?: Array<{ path: string; message: string }> };

/** The stable code and message of anything a tool threw. */
export function errorInfo(err: unknown): ToolErrorInfo {
  if (isTRPCClientError(err)) {
    const data = err.data as { appCode?: unknown; code?: unknown; issues?: Array<{ path: string; message: string }> } | undefined;
    if (!data) return refusedOrUnreachable(err.meta);
    const code = isErrorCode(data.appCode) ? data.appCode : isErrorCode(data.code) ? data.code : "INTERNAL_ERROR";
    return { code, message: err.message, ...(data.issues?.length ? { issues: data.issues } : {}) };
  }
  if (isDomainError(err)) return { code: err.code, message: err.message };
  if (err instanceof ToolFailure) return { code: err.code, message: err.message };
  return { code: "INTERNAL_ERROR", message: err instanceof Error ? err.message : String(err) };
}

/** A call that got no tRPC answer: the guard's 401/403 (its JSON body), or no server at all. */
function refusedOrUnreachable(meta: Record<string, unknown> | undefined): ToolErrorInfo {
  const status = (meta?.response as { status?: number } | undefined)?.status;
  const body = meta?.responseJSON as { error?: unknown; message?: unknown } | undefined;
  if (status === 401 || status === 403) {
    const why = typeof body?.message === "string" ? body.message : `HTTP ${status}`;
    return { code: status === 401 ? "UNAUTHORIZED" : "FORBIDDEN", message: `The Switchyard server refused the call: ${why} (check the token: --token or SWITCHYARD_TOKEN)` };
  }
  return { code: "SERVER_UNREACHABLE", message: status ? `The Switchyard server answered HTTP ${status}` : "The Switchyard server does not answer (is it running? check --url or SWITCHYARD_URL)" };
}

/** A tool error: `isError` with "CODE: message" (and each refused field), the code also in `_meta`. */
export function toolError(err: unknown): CallToolResult {
  const info = errorInfo(err);
  const lines = [`${info.code}: ${info.message}`, ...(info.issues ?? []).map((i) => `- ${i.path || "(input)"}: ${i.message}`)];
  return { isError: true, content: [{ type: "text", text: clip(lines.join("\n"), 4000) }], _meta: { "switchyard/error": info } };
}

/** An error a tool raises itself (not from a procedure), with a stable code. */
export class ToolFailure extends Error {
  constructor(
    readonly code: ErrorCode,
    message: string,
  ) {
    super(message);
  }
}

/** Text cut to `max` characters, marked with an ellipsis when cut. */
export function clip(text: string, max: number): string {
  return text.length <= max ? text : `${text.slice(0, max - 1)}…`;
}

/** A long text in pages: the slice at `offset`, and where the next page starts (null: the end). */
export function page(text: string, offset: number, max: number): { text: string; offset: number; totalChars: number; nextOffset: number | null } {
  const start = Math.min(offset, text.length);
  const end = Math.min(text.length, start + max);
  return { text: text.slice(start, end), offset: start, totalChars: text.length, nextOffset: end < text.length ? end : null };
}

/** A JSON value as a short preview: itself when its JSON is short, else `{truncated: <its JSON cut>}`. */
export function preview(value: unknown, max = 1000): unknown {
  const json = JSON.stringify(value) ?? "null";
  return json.length <= max ? value : { truncated: clip(json, max) };
}
