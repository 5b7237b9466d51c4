import { describe, expect, it } from "vitest";
import { AgentStreamEvent } from "../../../shared/agents";
import { ClaudeParser } from "./claude-parser";
import { expectedEvents, parseFile, recordings } from "./recorded-output";

const claudeRecordings = recordings((name) => name.startsWith("claude"));

const line = (v: unknown) => JSON.stringify(v);
const assistant = (content: unknown[], extra: Record<string, unknown> = {}) =>
  line({ type: "assistant", message: { id: "msg_1", role: "assistant", model: "claude-x", content }, session_id: "s1", ...extra });
const toolResult = (id: string, content: unknown, isError?: boolean) =>
  line({ type: "user", message: { role: "user", content: [{ type: "tool_result", tool_use_id: id, content, ...(isError === undefined ? {} : { is_error: isError }) }] } });

describe("claude parser on every recorded real Claude Code output", () => {
  it("has the shared and local recordings", () => {
    expect(claudeRecordings.map((r) => r.name)).toEqual(
      expect.arrayContaining(["claude-code-latest.jsonl", "claude-code-partial.jsonl", "claude-code-resume.jsonl", "claude-code-run2.jsonl", "claude-code-write.jsonl", "claude-code-rate-limit.jsonl", "claude-code-permission-denied.jsonl"]),
    );
  });

  for (const rec of claudeRecordings) {
    it(`${rec.name} yields its reviewed events, each valid on the wire`, () => {
      const events = parseFile(new ClaudeParser(), rec.path);
      for (const e of events) expect(AgentStreamEvent.safeParse(e).success, JSON.stringify(e)).toBe(true);
      expect(events).toEqual(expectedEvents(rec.name, events));
    });
  }

  it("ends every recorded run with exactly one usage event then the result", () => {
    for (const rec of claudeRecordings) {
      const kinds = parseFile(new ClaudeParser(), rec.path).map((e) => e.kind);
      expect(kinds.filter((k) => k === "usage"), rec.name).toHaveLength(1);
      expect(kinds.slice(-2), rec.name).toEqual(["usage", "result"]);
    }
  });
});

describe("claude parser", () => {
  it("reads system/init as the session and api_retry as a system event", () => {
    const p = new ClaudeParser();
    expect(p.parseLine(line({ type: "system", subtype: "init", session_id: "s1", model: "claude-x", cwd: "/w", tools: [] }))).toEqual([
      { kind: "session", sessionId: "s1", model: "claude-x", cwd: "/w" },
    ]);
    expect(p.parseLine(line({ type: "system", subtype: "api_retry", attempt: 2, error: "server_error", error_status: 500 }))).toEqual([
      { kind: "system", subtype: "api_retry", message: "retrying the API call (attempt 2): server_error" },
    ]);
    expect(p.parseLine(line({ type: "system", subtype: "compact_boundary" }))).toEqual([{ kind: "system", subtype: "compact_boundary", message: "compact_boundary" }]);
  });

  it("maps text, thinking and tool_use blocks, with the message id on text", () => {
    const p = new ClaudeParser();
    expect(p.parseLine(assistant([{ type: "text", text: "hi" }]))).toEqual([{ kind: "text", text: "hi", messageId: "msg_1" }]);
    expect(p.parseLine(assistant([{ type: "thinking", thinking: "hmm", signature: "x" }]))).toEqual([{ kind: "thinking", text: "hmm", messageId: "msg_1" }]);
    expect(p.parseLine(assistant([{ type: "tool_use", id: "t1", name: "Bash", input: { command: "ls" } }]))).toEqual([
      { kind: "tool_call", id: "t1", name: "Bash", input: { command: "ls" } },
    ]);
  });

  it("pairs each tool result with the name of its call, by tool_use_id, across interleaved calls", () => {
    const p = new ClaudeParser();
    p.parseLine(assistant([{ type: "tool_use", id: "t1", name: "Read", input: {} }]));
    p.parseLine(assistant([{ type: "tool_use", id: "t2", name: "Grep", input: {} }]));
    expect(p.parseLine(toolResult("t2", "found", false))).toEqual([{ kind: "tool_result", id: "t2", name: "Grep", output: "found", isError: false }]);
    expect(p.parseLine(toolResult("t1", [{ type: "text", text: "line 1" }, { type: "text", text: "line 2" }], true))).toEqual([
      { kind: "tool_result", id: "t1", name: "Read", output: "line 1\nline 2", isError: true },
    ]);
    // a result whose call this parser never saw (a reader starting mid-log) has no name
    expect(p.parseLine(toolResult("t9", "x"))).toEqual([{ kind: "tool_result", id: "t9", output: "x", isError: false }]);
  });

  it("treats is_error as a failure even when the subtype says success", () => {
    const events = new ClaudeParser().parseLine(line({ type: "result", subtype: "success", is_error: true, result: "API Error: Unable to connect to API", session_id: "s1", num_turns: 1, duration_ms: 9 }));
    expect(events).toEqual([
      { kind: "usage", usage: { inputTokens: 0, outputTokens: 0 } },
      { kind: "result", isError: true, message: "API Error: Unable to connect to API", subtype: "success", sessionId: "s1", numTurns: 1, durationMs: 9 },
    ]);
  });

  it("takes usage and cost from the result line only, never adding up the assistant lines' figures", () => {
    const p = new ClaudeParser();
    const usage = { input_tokens: 10, output_tokens: 1, cache_read_input_tokens: 3, cache_creation_input_tokens: 4 };
    const perMessage = [p.parseLine(assistant([{ type: "text", text: "a" }], {})), p.parseLine(assistant([{ type: "text", text: "b" }]))].flat();
    expect(perMessage.some((e) => e.kind === "usage")).toBe(false);
    const [u] = p.parseLine(line({ type: "result", subtype: "success", is_error: false, result: "ok", usage: { ...usage, input_tokens: 20, output_tokens: 25 }, total_cost_usd: 0.5 }));
    expect(u).toEqual({ kind: "usage", usage: { inputTokens: 20, outputTokens: 25, cacheReadTokens: 3, cacheWriteTokens: 4, costUsd: 0.5 } });
  });

  it("maps permission denials to tool name and input", () => {
    const events = new ClaudeParser().parseLine(
      line({ type: "result", subtype: "success", is_error: false, result: "", permission_denials: [{ tool_name: "Write", tool_use_id: "t1", tool_input: { file_path: "/x" } }] }),
    );
    expect(events.at(-1)).toMatchObject({ kind: "result", permissionDenials: [{ toolName: "Write", input: { file_path: "/x" } }] });
  });

  it("detects a rate limit on an assistant line by its error field or its wording, with the reset time", () => {
    const p = new ClaudeParser();
    expect(p.parseLine(assistant([{ type: "text", text: "API Error: Request rejected (429) · Claude AI usage limit reached|1893456000" }], { error: "rate_limit" }))).toEqual([
      { kind: "text", text: "API Error: Request rejected (429) · Claude AI usage limit reached|1893456000", messageId: "msg_1" },
      { kind: "rate_limit", message: "API Error: Request rejected (429) · Claude AI usage limit reached|1893456000", resetsAt: "2030-01-01T00:00:00.000Z" },
    ]);
    expect(p.parseLine(assistant([{ type: "text", text: "You've hit your limit · resets 3pm" }])).at(-1)).toEqual({ kind: "rate_limit", message: "You've hit your limit · resets 3pm" });
    // other API errors, and a model merely talking about limits, are no rate limit
    expect(p.parseLine(assistant([{ type: "text", text: "API Error: 500" }], { error: "server_error" })).map((e) => e.kind)).toEqual(["text"]);
    expect(p.parseLine(assistant([{ type: "text", text: "I will add a rate limit to the API." }])).map((e) => e.kind)).toEqual(["text"]);
  });

  it("yields a rate_limit before the usage and result of a failed result that says so", () => {
    const p = new ClaudeParser();
    const events = p.parseLine(line({ type: "result", subtype: "success", is_error: true, result: "Claude AI usage limit reached|1760000000", session_id: "s" }));
    expect(events.map((e) => e.kind)).toEqual(["rate_limit", "usage", "result"]);
    expect(events[0]).toEqual({ kind: "rate_limit", message: "Claude AI usage limit reached|1760000000", resetsAt: new Date(1760000000 * 1000).toISOString() });
    // a 429 status says so even in other words; a successful result that mentions limits does not
    expect(p.parseLine(line({ type: "result", is_error: true, api_error_status: 429, result: "Request rejected" }))[0]?.kind).toBe("rate_limit");
    expect(p.parseLine(line({ type: "result", is_error: false, result: "Added a rate limit." })).map((e) => e.kind)).toEqual(["usage", "result"]);
  });

  it("ignores stream_event lines (the full blocks follow) and status heartbeats", () => {
    const p = new ClaudeParser();
    expect(p.parseLine(line({ type: "stream_event", event: { type: "content_block_delta", delta: { type: "text_delta", text: "Hel" } } }))).toEqual([]);
    expect(p.parseLine(line({ type: "system", subtype: "status", status: "requesting" }))).toEqual([]);
  });

  it("never throws: malformed JSON and unknown lines become raw, an empty line nothing", () => {
    const p = new ClaudeParser();
    expect(p.parseLine('{"type":"assistant",')).toEqual([{ kind: "raw", text: '{"type":"assistant",' }]);
    expect(p.parseLine("Error: something on stderr")).toEqual([{ kind: "raw", text: "Error: something on stderr" }]);
    expect(p.parseLine("[1,2]")).toEqual([{ kind: "raw", text: "[1,2]" }]);
    expect(p.parseLine('{"type":"mystery"}')).toEqual([{ kind: "raw", text: '{"type":"mystery"}' }]);
    expect(p.parseLine("")).toEqual([]);
    expect(p.parseLine("   ")).toEqual([]);
    expect(p.parseLine('{"type":"assistant"}')).toEqual([]);
    expect(p.parseLine('{"type":"user","message":{"content":"plain prompt echo"}}')).toEqual([]);
  });

  it("calls routine only lines that cannot change the lifecycle", () => {
    const p = new ClaudeParser();
    expect(p.isRoutine(assistant([{ type: "text", text: "hi" }]))).toBe(true);
    expect(p.isRoutine(toolResult("t1", "ok"))).toBe(true);
    expect(p.isRoutine(assistant([{ type: "text", text: "x" }], { error: "rate_limit" }))).toBe(false);
    expect(p.isRoutine(line({ type: "assistant", message: { model: "<synthetic>", content: [{ type: "text", text: "You've hit your limit" }] } }))).toBe(false);
    expect(p.isRoutine(line({ type: "result", is_error: false }))).toBe(false);
    expect(p.isRoutine(line({ type: "system", subtype: "init", session_id: "s" }))).toBe(false);
  });
});
