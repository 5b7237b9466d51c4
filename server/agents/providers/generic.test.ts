import { describe, expect, it } from "vitest";
import { GenericLineParser } from "./generic";

describe("generic line parser", () => {
  it("reads plain lines as text, and nothing from an empty line", () => {
    const p = new GenericLineParser();
    expect(p.parseLine("Applied edit to src/a.ts")).toEqual([{ kind: "text", text: "Applied edit to src/a.ts" }]);
    expect(p.parseLine("{not json")).toEqual([{ kind: "text", text: "{not json" }]);
    expect(p.parseLine("  ")).toEqual([]);
  });

  it("maps JSON objects best-effort: text-like fields, warnings, echoed user input, the rest raw", () => {
    const p = new GenericLineParser();
    expect(p.parseLine('{"type":"message","role":"assistant","content":"Hi","delta":true}')).toEqual([{ kind: "text", text: "Hi" }]);
    expect(p.parseLine('{"type":"result","result":"done"}')).toEqual([{ kind: "text", text: "done" }]);
    expect(p.parseLine('{"type":"error","severity":"warning","message":"Loop detected"}')).toEqual([{ kind: "error", message: "Loop detected", fatal: false }]);
    expect(p.parseLine('{"type":"message","role":"user","content":"the prompt"}')).toEqual([{ kind: "raw", text: '{"type":"message","role":"user","content":"the prompt"}' }]);
    expect(p.parseLine('{"type":"init","session_id":"s"}')).toEqual([{ kind: "raw", text: '{"type":"init","session_id":"s"}' }]);
    expect(p.parseLine('{"type":"tool_use","parameters":{"a":1}}')).toEqual([{ kind: "raw", text: '{"type":"tool_use","parameters":{"a":1}}' }]);
  });
});
