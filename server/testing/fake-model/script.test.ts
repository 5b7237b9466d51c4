import { describe, expect, it } from "vitest";
import { extractScriptInput } from "./request-input";
import { chunkText, DEFAULT_TEXT, interpretScript, parseDirectives } from "./script";
import type { ScriptInput } from "./types";

const input = (over: Partial<ScriptInput>): ScriptInput => ({ system: "", lastUserText: "", offeredTools: [], ...over });

describe("interpretScript", () => {
  it("answers the default text in 6-character deltas", () => {
    const turn = interpretScript(input({ lastUserText: "hello" }));
    expect(turn.deltas).toEqual(["Hello ", "from f", "ake mo", "del"]);
    expect(turn.deltas?.join("")).toBe(DEFAULT_TEXT);
    expect(turn.usage).toEqual({ inputTokens: 10, outputTokens: 5 });
  });

  it("SAY answers the text, CHUNK sets the delta size, DELAY the pacing", () => {
    expect(interpretScript(input({ system: "You are the writer. SAY[Draft from writer.]" })).deltas).toEqual(["Draft ", "from w", "riter."]);
    const turn = interpretScript(input({ system: "CHUNK[2] DELAY[15]", lastUserText: "SAY[abcde]" }));
    expect(turn.deltas).toEqual(["ab", "cd", "e"]);
    expect(turn.delayMs).toBe(15);
  });

  it("LONG answers n deltas t0 .. t(n-1), output tokens = deltas", () => {
    const turn = interpretScript(input({ lastUserText: "LONG[12]" }));
    expect(turn.deltas).toHaveLength(12);
    expect(turn.deltas?.slice(0, 2)).toEqual(["t0 ", "t1 "]);
    expect(turn.deltas?.at(-1)).toBe("t11 ");
    expect(turn.usage?.outputTokens).toBe(12);
  });

  it("USE_TOOL calls an offered tool with the JSON input, 20 output tokens", () => {
    const turn = interpretScript(input({ system: 'USE_TOOL[read_file]{"path":"a]{b}.txt"}', offeredTools: ["read_file"] }));
    expect(turn.toolCalls).toEqual([{ name: "read_file", input: { path: "a]{b}.txt" } }]);
    expect(turn.deltas).toEqual(["Calling read_file."]);
    expect(turn.usage).toEqual({ inputTokens: 10, outputTokens: 20 });
  });

  it("USE_TOOL for a tool not offered is plain text", () => {
    const turn = interpretScript(input({ system: 'USE_TOOL[write_file]{"x":1}', offeredTools: ["read_file"] }));
    expect(turn.toolCalls).toBeUndefined();
    expect(turn.deltas?.join("")).toBe(DEFAULT_TEXT);
  });

  it("several USE_TOOL directives make several calls; no JSON means {}", () => {
    const turn = interpretScript(input({ system: "USE_TOOL[a]{\"n\":1} USE_TOOL[b]", offeredTools: ["a", "b"] }));
    expect(turn.toolCalls).toEqual([{ name: "a", input: { n: 1 } }, { name: "b", input: {} }]);
    expect(turn.deltas).toEqual(["Calling a, b."]);
  });

  it("a tool result echoes its first 200 characters, before any other directive", () => {
    const turn = interpretScript(input({ system: 'USE_TOOL[read_file]{}', offeredTools: ["read_file"], toolResult: "These are the notes.\n" }));
    expect(turn.toolCalls).toBeUndefined();
    expect(turn.deltas?.join("")).toBe("Tool finished: These are the notes.");
    const long = interpretScript(input({ toolResult: "x".repeat(500) })).deltas?.join("");
    expect(long).toBe(`Tool finished: ${"x".repeat(200)}`);
  });

  it("parseDirectives reads the first occurrence", () => {
    expect(parseDirectives("SAY[one] SAY[two] LONG[3]")).toMatchObject({ say: "one", long: 3, tools: [] });
    expect(chunkText("", 6)).toEqual([]);
  });
});

describe("extractScriptInput", () => {
  it("Anthropic: system blocks, last user text, tool_result content, tool names", () => {
    const body = {
      system: [{ type: "text", text: "SYS" }],
      tools: [{ name: "read_file", input_schema: {} }],
      messages: [
        { role: "user", content: "first" },
        { role: "assistant", content: [{ type: "tool_use", id: "t", name: "read_file", input: {} }] },
        { role: "user", content: [{ type: "tool_result", tool_use_id: "t", content: [{ type: "text", text: "RESULT" }] }] },
      ],
    };
    expect(extractScriptInput("anthropic", body)).toEqual({ system: "SYS", lastUserText: "", toolResult: "RESULT", offeredTools: ["read_file"] });
  });

  it("Chat: system and developer messages, trailing tool message", () => {
    const body = {
      tools: [{ type: "function", function: { name: "f" } }],
      messages: [
        { role: "system", content: "A" },
        { role: "developer", content: [{ type: "text", text: "B" }] },
        { role: "user", content: [{ type: "text", text: "SAY[x]" }] },
        { role: "assistant", content: null, tool_calls: [] },
        { role: "tool", tool_call_id: "1", content: "OUT1" },
        { role: "tool", tool_call_id: "2", content: "OUT2" },
      ],
    };
    expect(extractScriptInput("chat", body)).toEqual({ system: "A\nB", lastUserText: "SAY[x]", toolResult: "OUT1", offeredTools: ["f"] });
  });

  it("Responses: instructions, system items, string input, function_call_output", () => {
    expect(extractScriptInput("responses", { instructions: "I", input: "SAY[s]" })).toEqual({ system: "I", lastUserText: "SAY[s]", offeredTools: [] });
    const body = {
      instructions: "I",
      tools: [{ type: "function", name: "shell" }],
      input: [
        { role: "developer", content: "D" },
        { type: "message", role: "user", content: [{ type: "input_text", text: "go" }] },
        { type: "function_call", call_id: "c", name: "shell", arguments: "{}" },
        { type: "function_call_output", call_id: "c", output: "done" },
      ],
    };
    expect(extractScriptInput("responses", body)).toEqual({ system: "I\nD", lastUserText: "go", toolResult: "done", offeredTools: ["shell"] });
  });
});
