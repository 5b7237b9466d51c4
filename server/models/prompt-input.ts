import type { LanguageModelV3CallOptions, LanguageModelV3Prompt, LanguageModelV3ToolResultOutput } from "@ai-sdk/provider";
import type { ScriptInput } from "./script";

/** What the mock models read from an AI SDK call: the same ScriptInput the fake server reads off the wire. */

function textParts(content: ReadonlyArray<{ type: string; text?: string }>): string {
  return content
    .map((part) => (part.type === "text" && typeof part.text === "string" ? part.text : ""))
    .filter((text) => text !== "")
    .join("\n");
}

/** A tool output as text: strings as they are, JSON as JSON, content parts' text joined. */
export function toolOutputText(output: LanguageModelV3ToolResultOutput): string {
  switch (output.type) {
    case "text":
    case "error-text":
      return output.value;
    case "json":
    case "error-json":
      return JSON.stringify(output.value);
    case "execution-denied":
      return `Execution denied${output.reason ? `: ${output.reason}` : ""}`;
    case "content":
      return output.value.map((part) => (part.type === "text" ? part.text : "")).join("\n");
  }
}

/** The first tool result of the trailing tool messages (the turn answering a tool call), if any. */
function trailingToolResult(prompt: LanguageModelV3Prompt): string | undefined {
  let first: string | undefined;
  for (let i = prompt.length - 1; i >= 0; i--) {
    const message = prompt[i];
    if (message?.role !== "tool") break;
    const result = message.content.find((part) => part.type === "tool-result");
    if (result?.type === "tool-result") first = toolOutputText(result.output);
  }
  return first;
}

/** The tool name of the last tool result in the prompt. */
export function lastToolName(prompt: LanguageModelV3Prompt): string | undefined {
  const message = prompt.at(-1);
  if (message?.role !== "tool") return undefined;
  return message.content.find((part) => part.type === "tool-result")?.toolName;
}

export function scriptInputFromCall(options: Pick<LanguageModelV3CallOptions, "prompt" | "tools">): ScriptInput {
  const { prompt } = options;
  const system = prompt.flatMap((m) => (m.role === "system" ? [m.content] : [])).join("\n");
  const lastUser = prompt.findLast((m) => m.role === "user");
  return {
    system,
    lastUserText: lastUser?.role === "user" ? textParts(lastUser.content) : "",
    toolResult: trailingToolResult(prompt),
    offeredTools: (options.tools ?? []).flatMap((t) => (t.type === "function" ? [t.name] : [])),
  };
}

/** Rough token count of the whole prompt (4 characters a token), for mock usage numbers. */
export function promptTokens(prompt: LanguageModelV3Prompt): number {
  let chars = 0;
  for (const message of prompt) {
    if (message.role === "system") {
      chars += message.content.length;
      continue;
    }
    for (const part of message.content) {
      if (part.type === "text" || part.type === "reasoning") chars += part.text.length;
      else if (part.type === "tool-call") chars += JSON.stringify(part.input ?? {}).length;
      else if (part.type === "tool-result") chars += toolOutputText(part.output).length;
    }
  }
  return estimateTokens(chars);
}

export function estimateTokens(chars: number): number {
  return Math.max(1, Math.ceil(chars / 4));
}
