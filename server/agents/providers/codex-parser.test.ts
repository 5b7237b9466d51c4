import { describe, expect, it } from "vitest";
import { AgentStreamEvent } from "../../../shared/agents";
import { CodexParser } from "./codex-parser";
import { expectedEvents, parseFile, recordings } from "./recorded-output";

const codexRecordings = recordings((name) => name.startsWith("codex"));

const line = (v: unknown) => JSON.stringify(v);
const item = (type: "item.started" | "item.completed", it: Record<string, unknown>) => line({ type, item: it });
const turnCompleted = (input: number, cached: number, output: number, reasoning: number) =>
  line({ type: "turn.completed", usage: { input_tokens: input, cached_input_tokens: cached, output_tokens: output, reasoning_output_tokens: reasoning } });

describe("codex parser on every recorded real Codex output", () => {
  it("has the shared and local recordings, stderr-mixed one included", () => {
    expect(codexRecordings.map((r) => r.name)).toEqual(
      expect.arrayContaining(["codex-1.jsonl", "codex-2.jsonl", "codex-3.jsonl", "codex-4.jsonl", "codex-stderr-warning.txt", "codex-rate-limit.jsonl", "codex-reconnect.jsonl"]),
    );
  });

  for (const rec of codexRecordings) {
    it(`${rec.name} yields its reviewed events, each valid on the wire`, () => {
      const events = parseFile(new CodexParser(), rec.path);
      for (const e of events) expect(AgentStreamEvent.safeParse(e).success, JSON.stringify(e)).toBe(true);
      expect(events).toEqual(expectedEvents(rec.name, events));
    });
  }

  it("keeps the model-metadata error item a warning and ends every run with a result", () => {
    for (const rec of codexRecordings) {
      const events = parseFile(new CodexParser(), rec.path);
      expect(events.find((e) => e.kind === "error"), rec.name).toMatchObject({ fatal: false, message: expect.stringContaining("Model metadata") });
      expect(events.at(-1)?.kind, rec.name).toBe("result");
    }
  });
});

describe("codex parser", () => {
  it("reads thread.started as the session and ignores turn.started", () => {
    const p = new CodexParser();
    expect(p.parseLine(line({ type: "thread.started", thread_id: "th_1" }))).toEqual([{ kind: "session", sessionId: "th_1" }]);
    expect(p.parseLine(line({ type: "turn.started" }))).toEqual([]);
  });

  it("emits cumulative usage as given: the second turn.completed's usage equals its own totals, not a sum", () => {
    const p = new CodexParser();
    const first = p.parseLine(turnCompleted(10, 2, 5, 1));
    const second = p.parseLine(turnCompleted(30, 6, 12, 4));
    expect(first[0]).toEqual({ kind: "usage", usage: { inputTokens: 10, cacheReadTokens: 2, outputTokens: 5, reasoningTokens: 1 } });
    expect(second[0]).toEqual({ kind: "usage", usage: { inputTokens: 30, cacheReadTokens: 6, outputTokens: 12, reasoningTokens: 4 } });
  });

  it("ends a completed turn with a successful result carrying the last agent message", () => {
    const p = new CodexParser();
    expect(p.parseLine(item("item.completed", { id: "i0", type: "reasoning", text: "thinking" }))).toEqual([{ kind: "thinking", text: "thinking" }]);
    p.parseLine(item("item.completed", { id: "i1", type: "agent_message", text: "first" }));
    expect(p.parseLine(item("item.completed", { id: "i2", type: "agent_message", text: "final answer" }))).toEqual([{ kind: "text", text: "final answer" }]);
    expect(p.parseLine(turnCompleted(1, 0, 1, 0))[1]).toEqual({ kind: "result", isError: false, message: "final answer", subtype: "success" });
  });

  it("pairs a command's start and completion, and marks a non-zero exit an error", () => {
    const p = new CodexParser();
    expect(p.parseLine(item("item.started", { id: "i1", type: "command_execution", command: "false", aggregated_output: "", exit_code: null, status: "in_progress" }))).toEqual([
      { kind: "tool_call", id: "i1", name: "exec_command", input: { command: "false" } },
    ]);
    expect(p.parseLine(item("item.completed", { id: "i1", type: "command_execution", command: "false", aggregated_output: "boom\n", exit_code: 1, status: "failed" }))).toEqual([
      { kind: "tool_result", id: "i1", name: "exec_command", output: "boom\n", isError: true },
    ]);
  });

  it("emits the call too when a command completes without having started", () => {
    const events = new CodexParser().parseLine(item("item.completed", { id: "i7", type: "command_execution", command: "ls", aggregated_output: "a\n", exit_code: 0, status: "completed" }));
    expect(events).toEqual([
      { kind: "tool_call", id: "i7", name: "exec_command", input: { command: "ls" } },
      { kind: "tool_result", id: "i7", name: "exec_command", output: "a\n", isError: false },
    ]);
  });

  it("describes file changes and MCP tool calls as calls with results", () => {
    const p = new CodexParser();
    const changes = [{ path: "src/a.ts", kind: "update" }, { path: "b.md", kind: "add" }];
    expect(p.parseLine(item("item.completed", { id: "f1", type: "file_change", changes, status: "completed" }))).toEqual([
      { kind: "tool_call", id: "f1", name: "apply_patch", input: { changes } },
      { kind: "tool_result", id: "f1", name: "apply_patch", output: "update src/a.ts\nadd b.md", isError: false },
    ]);
    p.parseLine(item("item.started", { id: "m1", type: "mcp_tool_call", server: "docs", tool: "search", arguments: { q: "x" }, status: "in_progress" }));
    expect(p.parseLine(item("item.completed", { id: "m1", type: "mcp_tool_call", server: "docs", tool: "search", arguments: { q: "x" }, result: { content: [{ type: "text", text: "hit" }] }, status: "completed" }))).toEqual([
      { kind: "tool_result", id: "m1", name: "docs.search", output: "hit", isError: false },
    ]);
    expect(p.parseLine(item("item.completed", { id: "m2", type: "mcp_tool_call", server: "docs", tool: "search", error: { message: "no such tool" }, status: "failed" })).at(-1)).toEqual({
      kind: "tool_result",
      id: "m2",
      name: "docs.search",
      output: "no such tool",
      isError: true,
    });
  });

  it("fails a turn: turn.failed is a fatal error and a failed result, with a rate limit when it says 429", () => {
    const p = new CodexParser();
    expect(p.parseLine(line({ type: "turn.failed", error: { message: "model refused" } }))).toEqual([
      { kind: "error", message: "model refused", fatal: true },
      { kind: "result", isError: true, message: "model refused", subtype: "turn.failed" },
    ]);
    expect(new CodexParser().parseLine(line({ type: "turn.failed", error: { message: "429 Too Many Requests" } })).map((e) => e.kind)).toEqual(["rate_limit", "error", "result"]);
  });

  it("reads a top-level error as fatal (rate limit if it says so) but a Reconnecting notice as a warning", () => {
    const p = new CodexParser();
    expect(p.parseLine(line({ type: "error", message: "Reconnecting... 1/5 (stream disconnected before completion)" }))).toEqual([
      { kind: "error", message: "Reconnecting... 1/5 (stream disconnected before completion)", fatal: false },
    ]);
    expect(p.parseLine(line({ type: "error", message: "You've hit your usage limit." }))).toEqual([
      { kind: "rate_limit", message: "You've hit your usage limit." },
      { kind: "error", message: "You've hit your usage limit.", fatal: true },
    ]);
    // the turn.failed that repeats that error adds only the failed result
    expect(p.parseLine(line({ type: "turn.failed", error: { message: "You've hit your usage limit." } }))).toEqual([
      { kind: "result", isError: true, message: "You've hit your usage limit.", subtype: "turn.failed" },
    ]);
  });

  it("never throws: non-JSON lines become raw, an empty line nothing", () => {
    const p = new CodexParser();
    expect(p.parseLine("Reading additional input from stdin...")).toEqual([{ kind: "raw", text: "Reading additional input from stdin..." }]);
    expect(p.parseLine('{"type":"item.completed","item":')).toEqual([{ kind: "raw", text: '{"type":"item.completed","item":' }]);
    expect(p.parseLine('"a string"')).toEqual([{ kind: "raw", text: '"a string"' }]);
    expect(p.parseLine("")).toEqual([]);
    expect(p.parseLine(line({ type: "item.completed" }))).toEqual([]);
  });
});
