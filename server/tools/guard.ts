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
  /** `asked`: a human allowed the call (else the policy let it through without asking). */
  run(input: I, signal: AbortSignal, asked: boolean): Promise<string>;
};

/** The access as the reference names it in its denials: commands are `command.execute`. */
const ACCESS_NAMES: Record<PermissionOperation, string> = { "fs.read": "fs.read", "fs.write": "fs.write", "fs.exec": "command.execute" };

/** The tool output of a denied call, in the reference's words: `fs.read access denied by user for "/x".` */
export function deniedMessage(access: Access, by: "policy" | "user"): string {
  return `${ACCESS_NAMES[access.operation]} access denied${by === "user" ? " by user" : ""} for ${JSON.stringify(access.resource)}.`;
}

/** Settles every access in order; the first denial ends it. */
async function authorize(ctx: ToolContext, toolName: string, accesses: Access[]): Promise<{ denied?: string; asked: boolean }> {
  let asked = false;
  for (const access of accesses) {
    const decision = ctx.policy.decide({ tool: toolName, operation: access.operation, resource: access.resource }, ctx.commands);
    if (decision === "deny") return { denied: deniedMessage(access, "policy"), asked };
    if (decision === "allow") continue;
    asked = true;
    const answer = await ctx.requestPermission({ toolName, operation: access.operation, resource: access.resource, reason: "policy-ask", details: access.details });
    if (answer !== "allow") return { denied: deniedMessage(access, "user"), asked };
  }
  return { asked };
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
      let verdict: { denied?: string; asked: boolean };
      try {
        await ctx.streamedUpTo?.(options.toolCallId);
        throwIfAborted(signal);
        verdict = await authorize(ctx, toolName, spec.access(input));
      } finally {
        ctx.onToolCall?.({ toolCallId: options.toolCallId, toolName, args: JSON.stringify(input) });
      }
      if (verdict.denied !== undefined) return verdict.denied;
      throwIfAborted(signal);
      return spec.run(input, signal, verdict.asked);
    },
  });
}
