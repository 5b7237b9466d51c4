import { tool, type Tool } from "ai";
import type { z } from "zod";
import type { PermissionOperation } from "../../shared/runs";
import type { ToolContext } from "./tool-context";

/**
 * Every built-in tool runs through `guardedTool`: work out what the call touches, decide each
 * access with the policy, ask a human on "ask" (request_permission), announce the call
 * (onToolCall, so the tool-call event follows request_permission as in the reference), then run.
 * A denied call is a normal output saying so, not an error.
 */

export type Access = { operation: PermissionOperation; resource: string; details?: Record<string, unknown> };

export type GuardedToolSpec<I> = {
  description: string;
  inputSchema: z.ZodType<I>;
  /** What the call touches; may throw (bad input), which becomes the tool's error. */
  access(input: I): Access[];
  run(input: I, signal: AbortSignal): Promise<string>;
};

const VERBS: Record<PermissionOperation, string> = { "fs.read": "read", "fs.write": "write", "fs.exec": "run" };

export function deniedMessage(toolName: string, access: Access, by: "policy" | "user"): string {
  const who = by === "user" ? "the user denied it" : "the permission policy denies it";
  return `Access denied: ${toolName} may not ${VERBS[access.operation]} ${access.resource} (${who}). Do not retry this; continue without it or ask the user.`;
}

/** Settles every access in order; the first denial ends it. */
async function authorize(ctx: ToolContext, toolName: string, accesses: Access[]): Promise<string | undefined> {
  for (const access of accesses) {
    const decision = ctx.policy.decide({ tool: toolName, operation: access.operation, resource: access.resource });
    if (decision === "deny") return deniedMessage(toolName, access, "policy");
    if (decision === "allow") continue;
    const answer = await ctx.requestPermission({ toolName, operation: access.operation, resource: access.resource, reason: "policy-ask", details: access.details });
    if (answer !== "allow") return deniedMessage(toolName, access, "user");
  }
  return undefined;
}

export function throwIfAborted(signal: AbortSignal): void {
  if (signal.aborted) throw signal.reason ?? new DOMException("This operation was aborted", "AbortError");
}

export function guardedTool<I>(ctx: ToolContext, toolName: string, spec: GuardedToolSpec<I>): Tool<I, string> {
  return tool<I, string>({
    description: spec.description,
    inputSchema: spec.inputSchema,
    execute: async (input, options) => {
      const signal = options.abortSignal ? AbortSignal.any([ctx.signal, options.abortSignal]) : ctx.signal;
      let denied: string | undefined;
      try {
        throwIfAborted(signal);
        denied = await authorize(ctx, toolName, spec.access(input));
      } finally {
        ctx.onToolCall?.({ toolCallId: options.toolCallId, toolName, args: JSON.stringify(input) });
      }
      if (denied !== undefined) return denied;
      throwIfAborted(signal);
      return spec.run(input, signal);
    },
  });
}
