import { describe, expect, it } from "vitest";
import type { AgentOutputLine } from "../../../shared/agents";
import { toolNamesOf, toolResultLabel } from "./tool-names";

const line = (n: number, events: AgentOutputLine["events"]): AgentOutputLine => ({ line: n, session: 1, events, bytes: 10 });

describe("tool result labels", () => {
  const lines = [line(0, [{ kind: "tool_call", id: "toolu_01", name: "Bash", input: { command: "true" } }]), line(1, [{ kind: "tool_result", id: "toolu_01", output: "", isError: false }])];

  it("names a result by its tool, from the parser or else from its call in the log; never by the call id", () => {
    const names = toolNamesOf(lines);
    expect(toolResultLabel({ kind: "tool_result", id: "toolu_01", output: "", isError: false }, names)).toBe("Bash");
    expect(toolResultLabel({ kind: "tool_result", id: "toolu_01", name: "Read", output: "", isError: false }, names)).toBe("Read");
    expect(toolResultLabel({ kind: "tool_result", id: "toolu_99", output: "", isError: false }, names)).toBe("tool");
  });

  it("adds to a map kept across pages", () => {
    const names = new Map([["toolu_00", "Write"]]);
    toolNamesOf(lines, names);
    expect([...names]).toEqual([["toolu_00", "Write"], ["toolu_01", "Bash"]]);
  });
});
