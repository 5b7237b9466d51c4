import { closeSync, openSync, readFileSync, writeSync } from "node:fs";
import { join } from "node:path";
import { REPO_ROOT } from "../paths";

/**
 * A realistic Claude Code recording of any length, for the ingest benchmark: the lines of the
 * real CLI's output recorded in ../shared/reference/agent-output/ (assistant text, tool calls,
 * tool results with their `tool_use_result`, the status lines between requests, usage on every
 * assistant message), repeated turn after turn with fresh ids, and with the lengths real work has
 * (thinking and answers of a few hundred characters, commands' output and written files of up to
 * a few KB). No `result` line: a session has one, at its end, which the fake agent writes.
 */

const REFERENCE = join(REPO_ROOT, "..", "shared", "reference", "agent-output");

type Json = Record<string, unknown>;

function recorded(file: string, line: number): Json {
  return JSON.parse(readFileSync(join(REFERENCE, file), "utf8").split("\n")[line - 1]!) as Json;
}

/** A small deterministic generator (mulberry32): the same recording every time. */
function random(seed: number): () => number {
  let a = seed;
  return () => {
    a = (a + 0x6d2b79f5) | 0;
    let t = Math.imul(a ^ (a >>> 15), 1 | a);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const WORDS = "the a to of and in is it that for on with as this file test function should we can change return value call error line code type read write run check first then next config server agent event".split(" ");

export type RecordingInfo = { lines: number; bytes: number; kinds: Record<string, number> };

/** Write `count` lines to `path`. */
export function writeRecording(path: string, count: number): RecordingInfo {
  const rnd = random(20);
  const int = (lo: number, hi: number) => lo + Math.floor(rnd() * (hi - lo + 1));
  const words = (chars: number) => {
    let s = "";
    while (s.length < chars) s += `${WORDS[int(0, WORDS.length - 1)]}${rnd() < 0.08 ? ".\n" : " "}`;
    return s.trimEnd();
  };
  const code = (lines: number) => Array.from({ length: lines }, (_, i) => `${"  ".repeat(i % 3)}const v${i} = ${words(int(10, 60))};`).join("\n");

  const status = recorded("claude-code-partial.jsonl", 2);
  const text = recorded("claude-code-latest.jsonl", 2);
  const bash = recorded("claude-code-latest.jsonl", 3);
  const bashResult = recorded("claude-code-latest.jsonl", 4);
  const write = recorded("claude-code-write.jsonl", 3);
  const writeResult = recorded("claude-code-write.jsonl", 4);
  const session = String(text.session_id);

  let n = 0;
  const uuid = () => {
    n++;
    const h = n.toString(16).padStart(12, "0");
    return `5e55${h.slice(0, 4)}-0000-4000-8000-${h}`;
  };
  const msg = (m: Json, content: unknown[], id: number) => ({ ...(m.message as Json), id: `msg_bench_${id}`, content });
  const kinds: Record<string, number> = {};
  const out: string[] = [];
  const push = (kind: string, v: Json) => {
    kinds[kind] = (kinds[kind] ?? 0) + 1;
    out.push(JSON.stringify({ ...v, session_id: session, uuid: uuid(), ...("timestamp" in v ? { timestamp: new Date(Date.UTC(2026, 10, 22) + n * 40).toISOString() } : {}) }));
  };

  const fd = openSync(path, "w");
  let bytes = 0;
  let written = 0;
  const drain = () => {
    if (out.length === 0) return;
    const chunk = out.splice(0, out.length).join("\n") + "\n";
    bytes += Buffer.byteLength(chunk);
    writeSync(fd, chunk);
  };
  for (let turn = 0; written + out.length < count; turn++) {
    const usage = { input_tokens: int(2_000, 60_000), output_tokens: int(20, 900), cache_creation_input_tokens: int(0, 4_000), cache_read_input_tokens: int(0, 50_000) };
    const assistant = (content: unknown[]) => ({ ...text, message: { ...msg(text, content, turn), usage }, request_id: `req_bench_${turn}` });
    if (turn % 2 === 0) push("status", { ...status });
    if (turn % 2 === 0) push("thinking", assistant([{ type: "thinking", thinking: words(int(150, 900)), signature: "Eq".padEnd(int(200, 400), "A") }]));
    push("text", assistant([{ type: "text", text: words(int(40, 400)) }]));
    const toolId = `toolu_bench_${turn}`;
    if (turn % 3 === 2) {
      const path = `/home/user/project/src/module-${turn % 50}.ts`;
      const content = `${code(int(5, 40))}\n`;
      push("tool_use", { ...write, message: msg(write, [{ type: "tool_use", id: toolId, name: "Write", input: { file_path: path, content } }], turn) });
      const result = `File created successfully at: ${path} (file state is current in your context — no need to Read it back)`;
      push("tool_result", { ...writeResult, message: { role: "user", content: [{ tool_use_id: toolId, type: "tool_result", content: result }] }, tool_use_result: { ...(writeResult.tool_use_result as Json), filePath: path, content } });
    } else {
      const command = turn % 3 === 0 ? `npx vitest run src/module-${turn % 50}.test.ts` : `rg -n "${WORDS[turn % WORDS.length]}" src | head -40`;
      const stdout = Array.from({ length: int(0, 25) }, () => words(int(20, 100))).join("\n");
      const bashIn = (bash.message as { content: Array<{ input: Json }> }).content[0]!.input;
      push("tool_use", { ...bash, message: msg(bash, [{ type: "tool_use", id: toolId, name: "Bash", input: { ...bashIn, command, description: words(int(10, 40)) } }], turn) });
      push("tool_result", {
        ...bashResult,
        message: { role: "user", content: [{ tool_use_id: toolId, type: "tool_result", content: stdout, is_error: false }] },
        tool_use_result: { ...(bashResult.tool_use_result as Json), stdout },
        tool_result_meta: [{ ...((bashResult.tool_result_meta as Json[])[0] as Json), id: toolId }],
      });
    }
    if (out.length >= 5000) {
      written += out.length;
      drain();
    }
  }
  out.length = Math.min(out.length, count - written);
  written += out.length;
  drain();
  closeSync(fd);
  return { lines: written, bytes, kinds };
}
