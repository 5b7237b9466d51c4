#!/usr/bin/env node
// A stand-in for the `claude` CLI: the same flags, Claude-format stream-json on stdout, no model.
// Scripted by a ```fake-agent JSON block in the prompt (or FAKE_AGENT_SCRIPT); see index.ts for the
// steps. Cheap enough to run a hundred at once; used by tests and by the no-API-key demo.
import { execSync, spawnSync } from "node:child_process";
import { randomUUID } from "node:crypto";
import { closeSync, existsSync, mkdirSync, openSync, readFileSync, readSync, writeFileSync, writeSync } from "node:fs";
import { dirname, isAbsolute, join, resolve } from "node:path";

const argv = process.argv.slice(2);
const opts = {};
const positionals = [];
const VALUE_FLAGS = new Set(["-p", "--print", "--output-format", "--session-id", "--resume", "--permission-mode", "--model", "--mcp-config", "--permission-prompt-tool", "--allowedTools", "--settings"]);
for (let i = 0; i < argv.length; i++) {
  const a = argv[i];
  if (VALUE_FLAGS.has(a)) opts[a] = argv[++i];
  else if (a.startsWith("--")) opts[a] = true;
  else positionals.push(a);
}
const prompt = opts["-p"] ?? opts["--print"] ?? positionals.at(-1) ?? "";
const cwd = process.cwd();
const resuming = typeof opts["--resume"] === "string";
const sessionId = opts["--resume"] ?? opts["--session-id"] ?? randomUUID();
const started = Date.now();
let msgN = 0;
let toolN = 0;
let outTokens = 0;
let turns = 0;
let lastText = "";
let resultWritten = false;
let lastResultError = false;

process.on("SIGTERM", () => process.exit(143));

const out = (obj) => writeSync(1, `${JSON.stringify(obj)}\n`);
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

function assistant(content, extra = {}) {
  msgN++;
  out({ type: "assistant", message: { id: `msg_fake_${msgN}`, type: "message", role: "assistant", model: "fake-agent", content, stop_reason: null, usage: { input_tokens: 1, output_tokens: 1 } }, parent_tool_use_id: null, session_id: sessionId, ...extra });
}

function text(t) {
  lastText = t;
  outTokens += Math.ceil(t.length / 4);
  assistant([{ type: "text", text: t }]);
}

function toolUse(name, input) {
  toolN++;
  const id = `toolu_fake_${toolN}`;
  assistant([{ type: "tool_use", id, name, input }]);
  return id;
}

function toolResult(id, content, isError = false) {
  out({ type: "user", message: { role: "user", content: [{ tool_use_id: id, type: "tool_result", content, is_error: isError }] }, parent_tool_use_id: null, session_id: sessionId });
}

function result(message, isError = false, subtype = "success") {
  turns++;
  resultWritten = true;
  lastResultError = isError;
  out({
    type: "result", subtype, is_error: isError, duration_ms: Date.now() - started, num_turns: turns, result: message, session_id: sessionId,
    total_cost_usd: 0.001, usage: { input_tokens: Math.ceil(prompt.length / 4), output_tokens: outTokens, cache_read_input_tokens: 0, cache_creation_input_tokens: 0 },
    permission_denials: [],
  });
}

function writeSignal(signal) {
  const path = join(cwd, ".switchyard", "output", "signal.json");
  mkdirSync(dirname(path), { recursive: true });
  writeFileSync(path, JSON.stringify(signal));
}

function doWrite({ path, content }) {
  const abs = isAbsolute(path) ? path : resolve(cwd, path);
  const id = toolUse("Write", { file_path: abs, content });
  mkdirSync(dirname(abs), { recursive: true });
  writeFileSync(abs, content);
  toolResult(id, `File created successfully at: ${abs}`);
}

function runBash(command, id) {
  const r = spawnSync("/bin/sh", ["-c", command], { cwd, stdio: ["ignore", "pipe", "pipe"], encoding: "utf8" });
  toolResult(id, `${r.stdout ?? ""}${r.stderr ?? ""}`.trimEnd(), r.status !== 0);
}

async function askPermission(tool, input) {
  const toolFlag = opts["--permission-prompt-tool"];
  if (typeof toolFlag !== "string" || typeof opts["--mcp-config"] !== "string") return { behavior: "allow", updatedInput: input };
  const [, server, name] = /^mcp__(.+?)__(.+)$/.exec(toolFlag) ?? [];
  const raw = opts["--mcp-config"];
  const cfg = JSON.parse(raw.trimStart().startsWith("{") ? raw : readFileSync(raw, "utf8")).mcpServers[server];
  const headers = { "content-type": "application/json", accept: "application/json, text/event-stream", ...(cfg.headers ?? {}) };
  const rpc = async (id, method, params) => {
    const res = await fetch(cfg.url, { method: "POST", headers, body: JSON.stringify({ jsonrpc: "2.0", id, method, params }) });
    const body = await res.text();
    const json = body.trimStart().startsWith("{") ? body : (body.split("\n").find((l) => l.startsWith("data:")) ?? "data:{}").slice(5);
    return JSON.parse(json);
  };
  await rpc(1, "initialize", { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "fake-agent", version: "1" } });
  const reply = await rpc(2, "tools/call", { name, arguments: { tool_name: tool, input, tool_use_id: `toolu_fake_${toolN}` } });
  if (reply.error) return { behavior: "deny", message: reply.error.message };
  return JSON.parse(reply.result.content[0].text);
}

async function lines({ count, perSecond, textBytes = 120, stamp = false }) {
  const filler = "x".repeat(Math.max(0, textBytes - 12));
  // paced output comes in bursts every 100 ms, as real CLIs flush it (and 100 fakes stay cheap)
  const perTick = perSecond ? Math.max(1, Math.round(perSecond / 10)) : 2000;
  let n = 0;
  while (n < count) {
    let batch = "";
    const end = Math.min(count, n + perTick);
    const t = stamp ? ` t=${Date.now()}` : "";
    for (; n < end; n++) {
      msgN++;
      batch += `{"type":"assistant","message":{"id":"msg_fake_${msgN}","type":"message","role":"assistant","model":"fake-agent","content":[{"type":"text","text":"line ${n}${t} ${filler}"}],"stop_reason":null},"session_id":"${sessionId}"}\n`;
    }
    writeSync(1, batch);
    if (perSecond) await sleep(100);
  }
  lastText = `wrote ${count} lines`;
}

async function run(steps) {
  for (const step of steps) {
    const [key] = Object.keys(step);
    const v = step[key];
    switch (key) {
      case "text": text(v); break;
      case "thinking": assistant([{ type: "thinking", thinking: v, signature: "fake" }]); break;
      case "write": doWrite(v); break;
      case "bash": runBash(v, toolUse("Bash", { command: v })); break;
      case "sleep": await sleep(v); break;
      case "waitFile": while (!existsSync(v)) await sleep(50); break;
      case "signal": writeSignal(v); break;
      case "done": writeSignal({ status: "done", result: { message: v } }); result(v); break;
      case "questions": writeSignal({ status: "questions", questions: v }); result(`Questions: ${v.map((q) => q.question).join(" / ")}`); break;
      case "result": result(v, step.isError ?? false, step.subtype ?? "success"); break;
      case "hang": setInterval(() => {}, 1 << 30); return "hang";
      case "crash": process.exit(typeof v === "number" ? v : 1); break;
      case "exit": process.exit(v); break;
      case "stderr": process.stderr.write(`${v}\n`); break;
      case "hugeLine": text("y".repeat(v)); break;
      case "lines": await lines(v); break;
      case "catFile": {
        // copy a prepared file to stdout as fast as the OS allows (ingest benchmarks)
        const fd = openSync(v, "r");
        const buf = Buffer.allocUnsafe(8 << 20);
        for (let n; (n = readSync(fd, buf, 0, buf.length, null)) > 0; ) writeSync(1, buf, 0, n);
        closeSync(fd);
        lastText = `copied ${v}`;
        break;
      }
      case "rateLimit": {
        const reset = Math.floor((v?.resetsAt ? Date.parse(v.resetsAt) : Date.now() + 3600_000) / 1000);
        const msg = `Claude AI usage limit reached|${reset}`;
        assistant([{ type: "text", text: msg }], { error: "rate_limit" });
        result(msg, true);
        process.exit(1);
        break;
      }
      case "permission": {
        const { tool, input } = v;
        const id = toolUse(tool, input);
        const decision = await askPermission(tool, input);
        if (decision.behavior !== "allow") { toolResult(id, decision.message ?? "denied", true); break; }
        const granted = decision.updatedInput ?? input;
        if (tool === "Bash") runBash(granted.command, id);
        else if (tool === "Write") { writeFileSync(resolve(cwd, granted.file_path), granted.content ?? ""); toolResult(id, "written"); }
        else toolResult(id, "ok");
        break;
      }
      default: process.stderr.write(`fake-agent: unknown step ${JSON.stringify(step)}\n`);
    }
  }
  return "end";
}

function scriptOf() {
  const raw = process.env.FAKE_AGENT_SCRIPT ?? /```fake-agent\s*\n([\s\S]*?)```/.exec(prompt)?.[1];
  if (!raw) return null;
  const v = JSON.parse(raw);
  return Array.isArray(v) ? { steps: v } : v;
}

function defaultSteps() {
  const first = prompt.split("\n").find((l) => l.trim() && !l.startsWith("You are") && !l.startsWith("#"))?.trim().slice(0, 120) ?? "the task";
  return [
    { thinking: "Let me look at the task and the repository first." },
    { text: "Looking at the task..." },
    { sleep: 400 },
    { bash: "ls -a | head -20" },
    { sleep: 400 },
    { write: { path: "FAKE_AGENT_NOTES.md", content: `# Notes\n\nTask: ${first}\n` } },
    { sleep: 400 },
    { text: `I wrote FAKE_AGENT_NOTES.md with the task: ${first}` },
    { done: `Wrote FAKE_AGENT_NOTES.md for: ${first}` },
  ];
}

const stateDir = join(process.env.CLAUDE_CONFIG_DIR ?? join(cwd, ".switchyard", "fake-agent"), "fake-agent", "sessions");
const statePath = join(stateDir, `${sessionId}.json`);
let state = { script: null, runs: 0 };
if (resuming && existsSync(statePath)) state = JSON.parse(readFileSync(statePath, "utf8"));
else state.script = scriptOf();
if (process.env.FAKE_AGENT_SCRIPT && resuming) state.script = scriptOf();
state.runs += 1;
mkdirSync(stateDir, { recursive: true });
writeFileSync(statePath, JSON.stringify(state));

out({ type: "system", subtype: "init", cwd, session_id: sessionId, tools: ["Bash", "Read", "Write", "Edit"], model: "fake-agent", permissionMode: opts["--permission-mode"] ?? "default", claude_code_version: "fake" });

let steps;
if (!resuming) steps = state.script?.steps ?? defaultSteps();
else {
  const resumes = state.script?.resume;
  const head = prompt.slice(0, 200);
  if (prompt.startsWith("# Uncommitted work")) {
    // Switchyard's cleanup asks once for a commit; `ignoreCommitRequest` plays an agent that does not
    const commit = { bash: "git add -A && git -c user.name=fake-agent -c user.email=fake-agent@switchyard.invalid commit -qm 'fake agent: commit work'" };
    steps = state.script?.ignoreCommitRequest
      ? [{ text: "I will leave those files as they are." }, { done: "left uncommitted" }]
      : state.script?.commitWithoutSignal
        ? [commit, { text: "Committed." }]
        : [commit, { done: "committed" }];
  } else steps = resumes?.length ? resumes[Math.min(state.runs - 2, resumes.length - 1)] : [{ text: `Resumed: ${head}` }, { done: `Resumed: ${head}` }];
}
const end = await run(steps);
if (end === "end") {
  if (!resultWritten) result(lastText);
  process.exit(lastResultError ? 1 : 0);
}
