import { existsSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { REPO_ROOT } from "../../paths";
import { ClaudeParser } from "./claude-parser";
import { CodexParser } from "./codex-parser";
import { GenericLineParser } from "./generic";
import type { LineParser } from "./types";

const RECORDED = join(REPO_ROOT, "..", "shared", "reference", "agent-output");
const EXPECTED = join(import.meta.dirname, "__expected__");

function parseAll(parser: LineParser, text: string) {
  return text.split("\n").filter((l) => l !== "").flatMap((l) => parser.parseLine(l));
}

const files = existsSync(RECORDED) ? readdirSync(RECORDED).sort() : [];

describe("parsers on every recorded real CLI output", () => {
  it("has recordings to check", () => {
    expect(files.length).toBeGreaterThanOrEqual(10);
  });
  for (const file of files) {
    it(`${file} matches its reviewed expected events`, () => {
      const parser = file.startsWith("claude") ? new ClaudeParser() : new CodexParser();
      const events = parseAll(parser, readFileSync(join(RECORDED, file), "utf8"));
      const expectedPath = join(EXPECTED, `${file}.json`);
      if (process.env.UPDATE_EXPECTED) writeFileSync(expectedPath, `${JSON.stringify(events, null, 2)}\n`);
      expect(events).toEqual(JSON.parse(readFileSync(expectedPath, "utf8")));
    });
  }
});

describe("claude parser", () => {
  it("pairs tool results with their calls and reads usage from the result line only", () => {
    const events = parseAll(new ClaudeParser(), readFileSync(join(RECORDED, "claude-code-latest.jsonl"), "utf8"));
    const call = events.find((e) => e.kind === "tool_call");
    const result = events.find((e) => e.kind === "tool_result");
    expect(call).toMatchObject({ name: "Bash", input: { command: "touch e.txt && echo made" } });
    expect(result).toMatchObject({ id: call?.kind === "tool_call" ? call.id : "", name: "Bash", output: "made", isError: false });
    expect(events.filter((e) => e.kind === "usage")).toEqual([{ kind: "usage", usage: { inputTokens: 20, outputTokens: 25, cacheReadTokens: 0, cacheWriteTokens: 0, costUsd: 0.00058 } }]);
  });

  it("treats is_error as a failure even when the subtype says success, and reads a usage-limit reset", () => {
    const [rl, , result] = new ClaudeParser().parseLine(JSON.stringify({ type: "result", subtype: "success", is_error: true, result: "Claude AI usage limit reached|1893456000", session_id: "s" }));
    expect(result).toMatchObject({ kind: "result", isError: true, subtype: "success" });
    expect(rl).toEqual({ kind: "rate_limit", message: "Claude AI usage limit reached|1893456000", resetsAt: "2030-01-01T00:00:00.000Z" });
  });

  it("never throws on bad lines", () => {
    const p = new ClaudeParser();
    expect(p.parseLine("not json {")).toEqual([{ kind: "raw", text: "not json {" }]);
    expect(p.parseLine("")).toEqual([]);
    expect(p.parseLine("[1,2]")).toEqual([{ kind: "raw", text: "[1,2]" }]);
    expect(p.parseLine('{"type":"assistant"}')).toEqual([]);
  });
});

describe("codex parser", () => {
  it("keeps the error item a warning and emits cumulative usage as totals, never summed", () => {
    const p = new CodexParser();
    const warn = p.parseLine('{"type":"item.completed","item":{"id":"item_0","type":"error","message":"Model metadata not found"}}');
    expect(warn).toEqual([{ kind: "error", message: "Model metadata not found", fatal: false }]);
    p.parseLine('{"type":"turn.completed","usage":{"input_tokens":10,"output_tokens":5}}');
    const second = p.parseLine('{"type":"turn.completed","usage":{"input_tokens":30,"output_tokens":12}}');
    expect(second[0]).toEqual({ kind: "usage", usage: { inputTokens: 30, outputTokens: 12 } });
  });

  it("pairs a command's start and completion, marks a failing exit code, and fails a turn", () => {
    const p = new CodexParser();
    const started = p.parseLine('{"type":"item.started","item":{"id":"i1","type":"command_execution","command":"false","status":"in_progress"}}');
    const done = p.parseLine('{"type":"item.completed","item":{"id":"i1","type":"command_execution","command":"false","aggregated_output":"","exit_code":1,"status":"failed"}}');
    expect(started).toEqual([{ kind: "tool_call", id: "i1", name: "exec_command", input: { command: "false" } }]);
    expect(done).toEqual([{ kind: "tool_result", id: "i1", name: "exec_command", output: "", isError: true }]);
    const failed = p.parseLine('{"type":"turn.failed","error":{"message":"429 Too Many Requests"}}');
    expect(failed.map((e) => e.kind)).toEqual(["rate_limit", "error", "result"]);
  });
});

describe("generic parser", () => {
  it("reads plain lines as text and JSON text fields best-effort", () => {
    const p = new GenericLineParser();
    expect(p.parseLine("hello")).toEqual([{ kind: "text", text: "hello" }]);
    expect(p.parseLine('{"type":"x","text":"hi"}')).toEqual([{ kind: "text", text: "hi" }]);
    expect(p.parseLine('{"type":"x"}')).toEqual([{ kind: "raw", text: '{"type":"x"}' }]);
  });
});
