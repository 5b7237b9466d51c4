import { describe, expect, it } from "vitest";
import { outputItemOf } from "./EventView";

describe("outputItemOf: a CLI agent's event as an output item (one renderer for runs and agents)", () => {
  it("maps a tool call with its result apart, and names a result from its call", () => {
    expect(outputItemOf({ kind: "tool_call", id: "t1", name: "Bash", input: { command: "ls" } })).toEqual({
      kind: "tool",
      toolCallId: "t1",
      toolName: "Bash",
      args: '{"command":"ls"}',
      resultApart: true,
    });
    const names = new Map([["t1", "Bash"]]);
    expect(outputItemOf({ kind: "tool_result", id: "t1", output: "", isError: false }, names)).toMatchObject({ kind: "tool-result", toolName: "Bash", isError: false });
    expect(outputItemOf({ kind: "tool_result", id: "t9", output: "x", isError: true })).toMatchObject({ toolName: "tool", isError: true });
  });

  it("keeps text and thinking as the run page has them, and the process facts as notes", () => {
    expect(outputItemOf({ kind: "text", text: "hi" })).toEqual({ kind: "text", text: "hi" });
    expect(outputItemOf({ kind: "thinking", text: "hmm" })).toMatchObject({ kind: "thinking", text: "hmm", done: true });
    expect(outputItemOf({ kind: "result", isError: false, message: "done" })).toEqual({ kind: "note", tone: "ok", text: "✓ result: done" });
    expect(outputItemOf({ kind: "error", message: "meta", fatal: false })).toEqual({ kind: "note", tone: "warn", text: "warning: meta" });
    expect(outputItemOf({ kind: "system", subtype: "user_message", message: "go" })).toEqual({ kind: "note", tone: "you", text: "you: go" });
  });
});
