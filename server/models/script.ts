/**
 * The script language shared by the fake model server (test support) and the `mock/demo` model;
 * pure, no I/O. It reads the system prompt plus the text of the last user message (in that order;
 * the first occurrence of a directive wins):
 * - `SAY[text]`              answer `text` (up to the first `]`), in deltas of CHUNK characters;
 * - `LONG[n]`                answer n deltas "t0 ", "t1 ", ... "t{n-1} " (CHUNK does not apply);
 * - `DELAY[ms]`              sleep ms between deltas;
 * - `CHUNK[n]`               characters per delta for SAY, echo and default text (default 6);
 * - `USE_TOOL[name]{json}`   call that tool with that JSON input (`{}` when no JSON follows), only
 *                            when the request offers a tool of that name, else it is plain text.
 *                            Several directives make several calls in one turn. The turn's text
 *                            is the single delta "Calling name." ("Calling a, b." for several).
 * - a last user turn holding a tool result answers `Tool finished: <first 200 chars, trimmed>`;
 * - anything else answers `Hello from fake model`.
 * Precedence: tool-result echo, USE_TOOL, LONG, SAY, default.
 * Usage: input_tokens 10; output_tokens max(5, number of deltas), or 20 for a tool-call turn.
 */

/** What the interpreter reads from a request. */
export type ScriptInput = {
  /** System prompt (Anthropic `system`, system/developer messages, Responses `instructions`). */
  system: string;
  /** Text of the last user message. */
  lastUserText: string;
  /** Content of the tool result the last user turn holds, if any. */
  toolResult?: string;
  /** Names of the tools the request offers. */
  offeredTools: string[];
};

export type ScriptToolCall = { name: string; input: unknown };

/** The turn the script answers: text deltas, optional tool calls, pacing and usage. */
export type ScriptTurn = {
  kind: "turn";
  deltas: string[];
  toolCalls?: ScriptToolCall[];
  delayMs?: number;
  usage: { inputTokens: number; outputTokens: number };
};

export const DEFAULT_TEXT = "Hello from fake model";
export const DEFAULT_CHUNK_SIZE = 6;
export const SCRIPT_INPUT_TOKENS = 10;
export const TOOL_TURN_OUTPUT_TOKENS = 20;
const TOOL_RESULT_ECHO_CHARS = 200;

export type ScriptDirectives = {
  say?: string;
  long?: number;
  delayMs?: number;
  chunkSize?: number;
  tools: ScriptToolCall[];
};

function intDirective(text: string, name: string): number | undefined {
  const match = new RegExp(`${name}\\[(\\d+)\\]`).exec(text);
  return match?.[1] === undefined ? undefined : Number.parseInt(match[1], 10);
}

/** Index just past the JSON object starting at `start` (which must be `{`), or -1. */
function jsonObjectEnd(text: string, start: number): number {
  let depth = 0;
  let inString = false;
  for (let i = start; i < text.length; i++) {
    const ch = text[i];
    if (inString) {
      if (ch === "\\") i++;
      else if (ch === '"') inString = false;
    } else if (ch === '"') inString = true;
    else if (ch === "{") depth++;
    else if (ch === "}" && --depth === 0) return i + 1;
  }
  return -1;
}

function parseToolDirectives(text: string): ScriptToolCall[] {
  const calls: ScriptToolCall[] = [];
  const pattern = /USE_TOOL\[([^\]\s]+)\]/g;
  for (let match = pattern.exec(text); match; match = pattern.exec(text)) {
    const name = match[1] ?? "";
    const after = pattern.lastIndex;
    if (text[after] !== "{") {
      calls.push({ name, input: {} });
      continue;
    }
    const end = jsonObjectEnd(text, after);
    if (end < 0) continue;
    try {
      calls.push({ name, input: JSON.parse(text.slice(after, end)) as unknown });
      pattern.lastIndex = end;
    } catch {
      // not valid JSON: plain text
    }
  }
  return calls;
}

/** True when the text holds at least one directive (SAY, LONG, DELAY, CHUNK or USE_TOOL). */
export function hasDirectives(d: ScriptDirectives): boolean {
  return d.say !== undefined || d.long !== undefined || d.delayMs !== undefined || d.chunkSize !== undefined || d.tools.length > 0;
}

export function parseDirectives(text: string): ScriptDirectives {
  return {
    say: /SAY\[([\s\S]*?)\]/.exec(text)?.[1],
    long: intDirective(text, "LONG"),
    delayMs: intDirective(text, "DELAY"),
    chunkSize: intDirective(text, "CHUNK"),
    tools: parseToolDirectives(text),
  };
}

/** Splits text into deltas of `size` characters (code points); "" gives no delta. */
export function chunkText(text: string, size = DEFAULT_CHUNK_SIZE): string[] {
  const chars = Array.from(text);
  const step = Math.max(1, Math.floor(size));
  const chunks: string[] = [];
  for (let i = 0; i < chars.length; i += step) chunks.push(chars.slice(i, i + step).join(""));
  return chunks;
}

/** The `LONG[n]` deltas: "t0 ", "t1 ", ... */
export function longDeltas(n: number): string[] {
  return Array.from({ length: n }, (_, i) => `t${i} `);
}

function textTurn(deltas: string[], delayMs: number | undefined): ScriptTurn {
  return {
    kind: "turn",
    deltas,
    delayMs,
    usage: { inputTokens: SCRIPT_INPUT_TOKENS, outputTokens: Math.max(5, deltas.length) },
  };
}

/** Pure: the turn the script language answers for this request. */
export function interpretScript(input: ScriptInput): ScriptTurn {
  const d = parseDirectives(`${input.system}\n${input.lastUserText}`);
  const chunk = d.chunkSize ?? DEFAULT_CHUNK_SIZE;
  if (input.toolResult !== undefined) {
    const echo = input.toolResult.slice(0, TOOL_RESULT_ECHO_CHARS).trim();
    return textTurn(chunkText(`Tool finished: ${echo}`, chunk), d.delayMs);
  }
  const tools = d.tools.filter((call) => input.offeredTools.includes(call.name));
  if (tools.length > 0) {
    return {
      kind: "turn",
      deltas: [`Calling ${tools.map((call) => call.name).join(", ")}.`],
      toolCalls: tools,
      delayMs: d.delayMs,
      usage: { inputTokens: SCRIPT_INPUT_TOKENS, outputTokens: TOOL_TURN_OUTPUT_TOKENS },
    };
  }
  if (d.long !== undefined) return textTurn(longDeltas(d.long), d.delayMs);
  return textTurn(chunkText(d.say ?? DEFAULT_TEXT, chunk), d.delayMs);
}
