import type { FakeApi, ScriptInput } from "./types";

/** Reads the script input (system prompt, last user text, tool result, offered tools) from a request body. */

type Obj = Record<string, unknown>;

function isObj(value: unknown): value is Obj {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

function list(value: unknown): Obj[] {
  return Array.isArray(value) ? value.filter(isObj) : [];
}

/** Text of a content value: a string, or the `text` of each part (text, input_text, output_text). */
export function contentText(content: unknown): string {
  if (typeof content === "string") return content;
  if (!Array.isArray(content)) return "";
  return content
    .map((part) => (typeof part === "string" ? part : isObj(part) && typeof part.text === "string" ? part.text : ""))
    .filter((text) => text !== "")
    .join("\n");
}

/** A tool output: string, text parts, or anything else as JSON. */
function toolOutputText(output: unknown): string {
  if (typeof output === "string" || Array.isArray(output)) return contentText(output);
  return output === undefined ? "" : JSON.stringify(output);
}

function toolNames(tools: unknown): string[] {
  return list(tools)
    .map((tool) => (typeof tool.name === "string" ? tool.name : isObj(tool.function) ? tool.function.name : undefined))
    .filter((name): name is string => typeof name === "string");
}

function findLast<T>(items: T[], test: (item: T) => boolean): T | undefined {
  for (let i = items.length - 1; i >= 0; i--) {
    const item = items[i];
    if (item !== undefined && test(item)) return item;
  }
  return undefined;
}

/** The first item of the trailing run of items passing `test`. */
function firstOfTrailing<T>(items: T[], test: (item: T) => boolean): T | undefined {
  let first: T | undefined;
  for (let i = items.length - 1; i >= 0; i--) {
    const item = items[i];
    if (item === undefined || !test(item)) break;
    first = item;
  }
  return first;
}

function anthropicInput(body: Obj): ScriptInput {
  const lastUser = findLast(list(body.messages), (m) => m.role === "user");
  const result = list(lastUser?.content).find((block) => block.type === "tool_result");
  return {
    system: contentText(body.system),
    lastUserText: contentText(lastUser?.content),
    toolResult: result ? toolOutputText(result.content) : undefined,
    offeredTools: toolNames(body.tools),
  };
}

const isSystemRole = (m: Obj): boolean => m.role === "system" || m.role === "developer";

function chatInput(body: Obj): ScriptInput {
  const messages = list(body.messages);
  const result = firstOfTrailing(messages, (m) => m.role === "tool");
  return {
    system: messages.filter(isSystemRole).map((m) => contentText(m.content)).join("\n"),
    lastUserText: contentText(findLast(messages, (m) => m.role === "user")?.content),
    toolResult: result ? toolOutputText(result.content) : undefined,
    offeredTools: toolNames(body.tools),
  };
}

const isToolOutputItem = (item: Obj): boolean =>
  item.type === "function_call_output" || item.type === "custom_tool_call_output";

function responsesInput(body: Obj): ScriptInput {
  const instructions = typeof body.instructions === "string" ? [body.instructions] : [];
  if (typeof body.input === "string") {
    return { system: instructions.join("\n"), lastUserText: body.input, offeredTools: toolNames(body.tools) };
  }
  const items = list(body.input);
  const result = firstOfTrailing(items, isToolOutputItem);
  const systemItems = items.filter((item) => isSystemRole(item)).map((item) => contentText(item.content));
  return {
    system: [...instructions, ...systemItems].join("\n"),
    lastUserText: contentText(findLast(items, (item) => item.role === "user")?.content),
    toolResult: result ? toolOutputText(result.output) : undefined,
    offeredTools: toolNames(body.tools),
  };
}

/** Pure: what the script interpreter reads from a request body of the given API. */
export function extractScriptInput(api: FakeApi, body: Obj): ScriptInput {
  if (api === "anthropic") return anthropicInput(body);
  if (api === "chat") return chatInput(body);
  return responsesInput(body);
}
