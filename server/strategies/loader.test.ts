import { existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { resolveToolName, type StrategyIssue } from "../../shared/strategy";
import { StrategyError } from "./errors";
import { checkStrategyFile, checkStrategyText, loadStrategyFile, MAX_STRATEGY_BYTES, parseStrategy, type StrategyCheck } from "./loader";
import { StrategyTypeRegistry } from "./registry";

const repo = resolve(import.meta.dirname, "..", "..");
const reference = resolve(repo, "../shared/reference");
const examplesDir = resolve(reference, "comma-examples");
const goldenDir = resolve(reference, "comma-golden/strategies");
const haveReference = existsSync(examplesDir) && existsSync(goldenDir);
const bundledDir = resolve(import.meta.dirname, "examples");

function issuesOf(check: StrategyCheck): StrategyIssue[] {
  expect(check.valid, "expected the strategy to be rejected").toBe(false);
  return check.issues;
}

describe(haveReference ? "reference strategy files" : `reference strategy files (SKIPPED: ${reference} is missing)`, () => {
  const examples = haveReference ? readdirSync(examplesDir) : [];

  it.skipIf(!haveReference).each(examples)("loads the reference example %s", async (file) => {
    const loaded = await loadStrategyFile(resolve(examplesDir, file));
    expect(loaded.strategy.name).toBeTruthy();
    expect(loaded.warnings).toEqual([]);
  });

  it.skipIf(!haveReference).each(["sequential.yaml", "tool.yaml"])("loads the golden %s", async (file) => {
    const loaded = await loadStrategyFile(resolve(goldenDir, file));
    expect(loaded.format).toBe("yaml");
    expect(loaded.path).toBe(resolve(goldenDir, file));
  });

  it.skipIf(!haveReference)("rejects the golden invalid.yaml naming each problem with its YAML line", async () => {
    const err = await loadStrategyFile("strategies/invalid.yaml", { cwd: resolve(goldenDir, "..") }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(StrategyError);
    const { code, issues, message } = err as StrategyError;
    expect(code).toBe("STRATEGY_INVALID");
    expect(issues.map((i) => [i.path, i.line, i.column])).toEqual([
      ["version", 1, 1],
      ["agents.a.colour", 6, 5],
      ["flow.steps[0].agent", 11, 7],
    ]);
    expect(issues[0]?.message).toMatch(/^required/);
    expect(issues[1]?.message).toMatch(/^unknown key "colour"/);
    expect(issues[2]?.message).toBe('unknown agent "ghost" (defined: a)');
    expect(message).toContain('strategies/invalid.yaml:6:5 agents.a.colour: unknown key "colour"');
    expect(message).toContain("strategies/invalid.yaml:11:7 flow.steps[0].agent: unknown agent \"ghost\"");
  });

  it.skipIf(!haveReference).each(examples)("bundled %s keeps the reference flow and runs on mock models", async (file) => {
    const original = await loadStrategyFile(resolve(examplesDir, file));
    const bundled = await loadStrategyFile(resolve(bundledDir, file));
    expect(bundled.strategy.flow).toEqual(original.strategy.flow);
    expect(Object.keys(bundled.strategy.agents)).toEqual(Object.keys(original.strategy.agents));
    for (const agent of Object.values(bundled.strategy.agents)) {
      if ("model" in agent) expect(agent.model).toMatch(/^mock\//);
    }
  });
});

const valid = () => ({
  name: "T",
  version: "1.0",
  agents: { a: { model: "mock/echo" }, b: { model: "mock/demo" } } as Record<string, Record<string, unknown>>,
  flow: { type: "sequential", steps: [{ agent: "a" }, { agent: "b" }] } as Record<string, unknown>,
});
type Doc = ReturnType<typeof valid>;
const nest = (depth: number): Record<string, unknown> =>
  depth === 0 ? { agent: "a" } : { type: depth % 2 ? "sequential" : "broadcast", steps: [nest(depth - 1)] };

type Case = { name: string; edit?: (s: Doc) => void; text?: string; path: string; message: string };
const cases: Case[] = [
  { name: "unknown top-level key", edit: (s) => Object.assign(s, { colour: "red" }), path: "colour", message: 'unknown key "colour" (allowed: name, version' },
  { name: "missing name", edit: (s) => Reflect.deleteProperty(s, "name"), path: "name", message: "required: expected a non-empty strategy name" },
  { name: "empty name", edit: (s) => (s.name = ""), path: "name", message: 'expected a non-empty strategy name, got ""' },
  { name: "missing version", edit: (s) => Reflect.deleteProperty(s, "version"), path: "version", message: "required" },
  { name: "version as a number", edit: (s) => Object.assign(s, { version: 1 }), path: "version", message: 'quote it (version: "1.0")' },
  { name: "agents not a map", edit: (s) => Object.assign(s, { agents: ["a", "b"] }), path: "agents", message: "expected a map of agent name -> agent, got a list" },
  { name: "agent not a map", edit: (s) => Object.assign(s.agents, { a: "mock/echo" }), path: "agents.a", message: 'expected an agent map (e.g. {model: "provider/model"}), got "mock/echo"' },
  { name: "empty agent name", edit: (s) => (s.agents[""] = { model: "mock/echo" }), path: 'agents[""]', message: "agent names must not be empty" },
  { name: "unknown agent type", edit: (s) => (s.agents.a = { type: "robot" }), path: "agents.a.type", message: 'unknown agent type "robot" (known: llm, user, cli)' },
  { name: "llm agent without model", edit: (s) => (s.agents.a = { systemPrompt: "hi" }), path: "agents.a.model", message: 'required: expected a model "provider/model"' },
  { name: "model without provider", edit: (s) => (s.agents.a = { model: "gpt-4o" }), path: "agents.a.model", message: 'expected a model "provider/model" (e.g.' },
  { name: "model with an empty part", edit: (s) => (s.agents.a = { model: "mock/" }), path: "agents.a.model", message: 'got "mock/"' },
  { name: "unknown tool", edit: (s) => (s.agents.a = { model: "mock/echo", tools: ["read_file", "hack"] }), path: "agents.a.tools[1]", message: 'unknown tool "hack" (known: read_file, write_file' },
  { name: "maxSteps 0", edit: (s) => (s.agents.a = { model: "mock/echo", maxSteps: 0 }), path: "agents.a.maxSteps", message: "expected a positive integer, got number 0" },
  { name: "maxSteps 1.5", edit: (s) => (s.agents.a = { model: "mock/echo", maxSteps: 1.5 }), path: "agents.a.maxSteps", message: "expected a positive integer, got number 1.5" },
  { name: "unknown model option", edit: (s) => (s.agents.a = { model: "mock/echo", modelOptions: { temp: 1 } }), path: "agents.a.modelOptions.temp", message: 'unknown key "temp" (allowed: temperature' },
  { name: "temperature as text", edit: (s) => (s.agents.a = { model: "mock/echo", modelOptions: { temperature: "hot" } }), path: "agents.a.modelOptions.temperature", message: 'expected a number >= 0, got "hot"' },
  { name: "outputSchema not an object", edit: (s) => (s.agents.a = { model: "mock/echo", outputSchema: "json" }), path: "agents.a.outputSchema", message: 'expected a JSON Schema object, got "json"' },
  { name: "outputSchema a list", edit: (s) => (s.agents.a = { model: "mock/echo", outputSchema: [] }), path: "agents.a.outputSchema", message: "expected a JSON Schema object, got a list" },
  { name: "template without text", edit: (s) => (s.agents.a = { model: "mock/echo", systemPromptTemplate: { variables: {} } }), path: "agents.a.systemPromptTemplate.template", message: "required: expected a string" },
  { name: "providerOptions not nested", edit: (s) => (s.agents.a = { model: "mock/echo", providerOptions: { anthropic: 3 } }), path: "agents.a.providerOptions.anthropic", message: "expected a map of options, got number 3" },
  { name: "rolling window of 0", edit: (s) => (s.agents.a = { model: "mock/echo", context: { rollingWindow: { maxMessages: 0 } } }), path: "agents.a.context.rollingWindow.maxMessages", message: "expected a positive integer" },
  { name: "user agent with a model", edit: (s) => (s.agents.b = { type: "user", model: "mock/echo" }), path: "agents.b.model", message: 'unknown key "model" (allowed: type, description, config)' },
  { name: "user agent with a bad config", edit: (s) => (s.agents.b = { type: "user", config: { requireInput: "yes" } }), path: "agents.b.config.requireInput", message: 'expected true or false, got "yes"' },
  { name: "cli agent without provider", edit: (s) => (s.agents.b = { type: "cli", repo: "." }), path: "agents.b.provider", message: "required: expected a CLI provider name" },
  { name: "cli agent with a bad permissionMode", edit: (s) => (s.agents.b = { type: "cli", provider: "claude", permissionMode: "yolo" }), path: "agents.b.permissionMode", message: 'expected bypass, acceptEdits, ask, got "yolo"' },
  { name: "flow type unknown", edit: (s) => (s.flow.type = "parallel"), path: "flow.type", message: 'unknown flow type "parallel" (known: sequential, broadcast, cycle)' },
  { name: "flow type missing", edit: (s) => Reflect.deleteProperty(s.flow, "type"), path: "flow.type", message: "required: expected a flow type (sequential, broadcast, cycle)" },
  { name: "flow not a map", edit: (s) => Object.assign(s, { flow: [{ agent: "a" }] }), path: "flow", message: "expected a flow map {type, steps}, got a list" },
  { name: "empty steps", edit: (s) => (s.flow.steps = []), path: "flow.steps", message: "a flow needs at least one step" },
  { name: "empty flow name", edit: (s) => (s.flow.name = ""), path: "flow.name", message: "expected a non-empty flow name" },
  { name: "step with both agent and type", edit: (s) => (s.flow.steps = [{ agent: "a", type: "sequential", steps: [{ agent: "b" }] }]), path: "flow.steps[0]", message: "a step is either {agent: name} or a nested flow {type, steps}, not both" },
  { name: "step as a bare name", edit: (s) => (s.flow.steps = ["a"]), path: "flow.steps[0]", message: 'expected a step ({agent: name}) or a nested flow ({type, steps}), got "a"' },
  { name: "step with an empty agent", edit: (s) => (s.flow.steps = [{ agent: "" }]), path: "flow.steps[0].agent", message: "expected an agent name" },
  { name: "step with an unknown key", edit: (s) => (s.flow.steps = [{ agent: "a", retries: 2 }]), path: "flow.steps[0].retries", message: 'unknown key "retries" (allowed: agent, description)' },
  {
    name: "unknown agent in a nested step",
    edit: (s) => (s.flow.steps = [{ agent: "a" }, { agent: "b" }, { type: "broadcast", steps: [{ type: "sequential", steps: [{ agent: "ghost" }] }] }]),
    path: "flow.steps[2].steps[0].steps[0].agent",
    message: 'unknown agent "ghost" (defined: a, b)',
  },
  { name: "observer not defined", edit: (s) => Object.assign(s.flow, { type: "cycle", observer: "judge" }), path: "flow.observer", message: 'unknown agent "judge" (defined: a, b)' },
  { name: "observer on a sequential flow", edit: (s) => (s.flow.observer = "a"), path: "flow.observer", message: 'unknown key "observer"' },
  { name: "cycles 0", edit: (s) => Object.assign(s.flow, { type: "cycle", cycles: 0 }), path: "flow.cycles", message: 'expected a positive integer or "Infinity", got number 0' },
  { name: 'cycles "lots"', edit: (s) => Object.assign(s.flow, { type: "cycle", cycles: "lots" }), path: "flow.cycles", message: 'got "lots"' },
  { name: "bad breakCycleSignalMatch", edit: (s) => Object.assign(s.flow, { type: "cycle", breakCycleSignalMatch: "fuzzy" }), path: "flow.breakCycleSignalMatch", message: 'expected substring, first-line, any-line, exact, got "fuzzy"' },
  { name: "no break signals", edit: (s) => Object.assign(s.flow, { type: "cycle", breakCycleSignals: [] }), path: "flow.breakCycleSignals", message: "needs at least one signal" },
  { name: "separator not a string", edit: (s) => Object.assign(s.flow, { type: "broadcast", separator: 3 }), path: "flow.separator", message: "expected a string, got number 3" },
  { name: "separator on a sequential flow", edit: (s) => (s.flow.separator = ","), path: "flow.separator", message: 'unknown key "separator"' },
  { name: "budget negative", edit: (s) => Object.assign(s, { budget: { usd: -1 } }), path: "budget.usd", message: "expected a positive number, got number -1" },
  { name: "budget of 0 tokens", edit: (s) => Object.assign(s, { budget: { tokens: 0 } }), path: "budget.tokens", message: "expected a positive integer, got number 0" },
  { name: "command pattern with an unclosed {", edit: (s) => Object.assign(s, { permissions: { run_command: { ask: ["git push*", "rm {a,b"] } } }), path: "permissions.run_command.ask[1]", message: 'invalid glob "rm {a,b": "{" is never closed by "}"' },
  { name: "flows nested 33 deep", edit: (s) => (s.flow = nest(33)), path: "flow" + ".steps[0]".repeat(32), message: "flows nest too deeply (more than 32 levels)" },
  { name: "a list at the top", text: "[]", path: "", message: "expected a strategy map {name, version, agents, flow}, got a list" },
];

describe("malformed strategies", () => {
  it.each(cases)("$name -> $path", ({ edit, text, path, message }) => {
    const doc = valid();
    edit?.(doc);
    const check = checkStrategyText(text ?? JSON.stringify(doc, null, 2), { format: "json", fileName: "bad.json" });
    const issues = issuesOf(check);
    const found = issues.find((i) => i.path === path);
    expect(found, `no issue at "${path}" in ${JSON.stringify(issues)}`).toBeDefined();
    expect(found?.message).toContain(message);
    expect(found?.file).toBe("bad.json");
    expect(found?.line, "JSON issues carry a line").toBeGreaterThan(0);
  });

  it("has at least twenty cases", () => {
    expect(cases.length).toBeGreaterThanOrEqual(20);
  });

  it("reports every issue at once, not just the first", () => {
    const doc = valid();
    doc.agents.a = { model: "bad", maxSteps: 0 };
    doc.flow.steps = [{ agent: "ghost" }];
    const paths = issuesOf(checkStrategyText(JSON.stringify(doc), { format: "json" })).map((i) => i.path);
    expect(paths).toEqual(["agents.a.model", "agents.a.maxSteps", "flow.steps[0].agent"]);
  });
});

describe("syntax errors", () => {
  it("a JSON syntax error has its line and column", () => {
    const check = checkStrategyText('{\n  "name": "x",\n  "version" "1.0"\n}\n', { format: "json", fileName: "s.json" });
    expect(check).toMatchObject({ valid: false, code: "STRATEGY_PARSE_ERROR" });
    expect(check.issues[0]).toMatchObject({ file: "s.json", path: "", line: 3, column: 13 });
    expect(check.issues[0]?.message).toBe("JSON syntax error: colon expected");
  });

  it("comments in a .json file point to .jsonc", () => {
    const check = checkStrategyText('{\n  // a comment\n  "name": "x"\n}', { format: "json" });
    expect(check.issues[0]).toMatchObject({ line: 2, column: 3 });
    expect(check.issues[0]?.message).toContain("need a .jsonc file");
  });

  it("a YAML syntax error has its line", () => {
    const text = 'name: x\nversion: "1"\nagents:\n  a: {model: mock/echo\nflow: {}\n';
    const check = checkStrategyText(text, { format: "yaml" });
    expect(check).toMatchObject({ valid: false, code: "STRATEGY_PARSE_ERROR" });
    expect(check.issues[0]?.message).toMatch(/^YAML syntax error: /);
    expect(check.issues[0]?.line).toBeGreaterThanOrEqual(4);
  });

  it("duplicate keys are errors in YAML and in JSON", () => {
    const yaml = checkStrategyText("name: a\nname: b\n", { format: "yml" });
    expect(yaml.issues[0]).toMatchObject({ line: 2, column: 1 });
    expect(yaml.issues[0]?.message).toContain("unique");
    const json = checkStrategyText('{"name": "a",\n "name": "b"}', { format: "json" });
    expect(json.issues[0]).toMatchObject({ message: 'duplicate key "name"', line: 2, column: 2 });
  });

  it("an empty file is an error, not a crash", () => {
    expect(checkStrategyText("", { format: "json" }).issues[0]?.message).toBe("JSON syntax error: value expected");
    expect(checkStrategyText("", { format: "yaml" }).issues[0]?.message).toContain("got null");
  });

  it("parseStrategy throws STRATEGY_PARSE_ERROR for syntax", () => {
    expect(() => parseStrategy("{", { format: "json", fileName: "x.json" })).toThrow(/Strategy file could not be parsed: x.json/);
  });
});

describe("accepted shapes", () => {
  it("JSONC allows comments and trailing commas", () => {
    const text = `{
      // the name
      "name": "C", "version": "1",
      /* agents */ "agents": { "a": { "model": "mock/echo", }, },
      "flow": { "type": "sequential", "steps": [ { "agent": "a" }, ], },
    }`;
    const loaded = parseStrategy(text, { format: "jsonc", fileName: "c.jsonc" });
    expect(loaded).toMatchObject({ format: "jsonc", path: "c.jsonc", strategy: { name: "C" } });
  });

  it("YAML anchors and merge keys share agent settings", () => {
    const text = 'name: M\nversion: "1"\nbase: &base {model: mock/echo, maxSteps: 2}\n';
    const check = checkStrategyText(`${text}agents: {a: {<<: *base, systemPrompt: A}}\nflow: {type: sequential, steps: [{agent: a}]}`, { format: "yaml" });
    expect(issuesOf(check).map((i) => [i.path, i.line])).toEqual([["base", 3]]); // strict: no stray top-level keys
    const ok = parseStrategy('name: M\nversion: "1"\nagents:\n  a: &a {model: mock/echo, maxSteps: 2}\n  b: {<<: *a, systemPrompt: B}\nflow: {type: sequential, steps: [{agent: a}, {agent: b}]}', { format: "yaml" });
    expect(ok.strategy.agents.b).toEqual({ model: "mock/echo", maxSteps: 2, systemPrompt: "B" });
  });

  it("flows nest six levels deep", () => {
    const doc = valid();
    doc.flow = nest(6);
    const check = checkStrategyText(JSON.stringify(doc), { format: "json" });
    expect(check.valid).toBe(true);
  });

  it("every key the reference and Switchyard allow", () => {
    const text = `
name: Full
version: "2"
description: all keys
budget: {tokens: 1000, usd: 0.5}
agents:
  a:
    type: llm
    model: openrouter/meta-llama/llama-3
    description: d
    systemPrompt: s
    systemPromptTemplate: {template: "Hi {{who}}", variables: {who: you, n: 1, ok: true, list: [x], map: {k: v}}}
    tools: [read, grep, glob, read_file, apply_patch, webfetch]
    maxSteps: 4
    modelOptions: {temperature: 0.2, topP: 0.9, topK: 40, maxOutputTokens: 100, maxTokens: 100, presencePenalty: 0, frequencyPenalty: 0, stopSequences: [END], seed: 7}
    providerOptions: {anthropic: {thinking: {type: enabled}}}
    outputSchema: {type: object, properties: {x: {type: string}}}
    context: {rollingWindow: {maxMessages: 20, maxTokens: 8000}}
  u: {type: user, description: asks, config: {requireInput: true, presetMessage: "Your question?"}}
  c: {type: cli, provider: claude, repo: ., baseRef: main, mode: worktree, permissionMode: acceptEdits, promptTemplate: "Do {{input}}", account: work}
flow:
  name: F
  description: f
  type: cycle
  cycles: Infinity
  observer: a
  breakCycleSignals: [DONE]
  breakCycleSignalMatch: exact
  steps:
    - {agent: u, description: ask}
    - {name: B, type: broadcast, separator: " | ", steps: [{agent: a}, {agent: c}]}
`;
    const loaded = parseStrategy(text, { format: "yaml" });
    expect(loaded.warnings).toEqual([]);
    expect(loaded.strategy.flow).toMatchObject({ type: "cycle", cycles: "Infinity" });
    const tools = loaded.strategy.agents.a && "tools" in loaded.strategy.agents.a ? loaded.strategy.agents.a.tools : [];
    expect(tools?.map(resolveToolName)).toEqual(["read_file", "search_files", "glob", "read_file", "apply_patch", "webfetch"]);
  });
});

describe("warnings for accepted but not yet implemented keys", () => {
  it("mcpServers, skills and context.compaction each warn, with their line", () => {
    const text = [
      'name: W',
      'version: "1"',
      "agents:",
      "  a:",
      "    model: mock/echo",
      "    mcpServers: [github]",
      "    skills: [review]",
      "    context:",
      "      compaction: {threshold: 0.8}",
      "flow: {type: sequential, steps: [{agent: a}]}",
    ].join("\n");
    const loaded = parseStrategy(text, { format: "yaml", fileName: "w.yaml" });
    expect(loaded.warnings).toEqual([
      { path: "agents.a.mcpServers", message: "MCP servers are accepted but not run yet", line: 6, column: 5 },
      { path: "agents.a.skills", message: "skills are accepted but not loaded yet", line: 7, column: 5 },
      { path: "agents.a.context.compaction", message: "context compaction is accepted but not applied yet", line: 9, column: 7 },
    ]);
  });

  it("an invalid strategy still reports its warnings beside the issues", () => {
    const check = checkStrategyText('{"name":"W","version":"1","agents":{"a":{"model":"x","skills":["s"]}},"flow":{"type":"sequential","steps":[{"agent":"a"}]}}', { format: "json" });
    expect(check.valid).toBe(false);
    expect(check.warnings.map((w) => w.path)).toEqual(["agents.a.skills"]);
  });
});

describe("the error message", () => {
  it("lists every issue as file:line:column path: message", () => {
    const text = ['name: Bad', 'version: "1"', "agents:", "  a:", "    model: mock/echo", "    tools: [read]", "    colour: blue", "flow:", "  type: sequential", "  steps: [{agent: a}]"].join("\n");
    const err = (() => {
      try {
        parseStrategy(text, { format: "yaml", fileName: "strategies/bad.yaml" });
      } catch (e) {
        return e;
      }
    })();
    expect(err).toBeInstanceOf(StrategyError);
    expect((err as StrategyError).message).toBe(
      'Strategy validation failed:\n  - strategies/bad.yaml:7:5 agents.a.colour: unknown key "colour" (allowed: type, description, model, systemPrompt, systemPromptTemplate, tools, maxSteps, modelOptions, providerOptions, outputSchema, mcpServers, skills, context)',
    );
    expect((err as StrategyError).details).toMatchObject({ file: "strategies/bad.yaml", issues: [{ path: "agents.a.colour", line: 7 }] });
  });

  it("a missing file is STRATEGY_NOT_FOUND with its absolute path", async () => {
    const err = await loadStrategyFile("nope.yaml", { cwd: "/tmp" }).catch((e: unknown) => e);
    expect(err).toMatchObject({ code: "STRATEGY_NOT_FOUND", kind: "NOT_FOUND", message: "Strategy file not found: /tmp/nope.yaml" });
  });

  it("a file that is no strategy file is STRATEGY_INVALID, as data", async () => {
    const dir = mkdtempSync(join(tmpdir(), "yard-strategy-"));
    try {
      writeFileSync(join(dir, "notes.txt"), "hello");
      mkdirSync(join(dir, "folder.yaml"));
      writeFileSync(join(dir, "huge.json"), " ".repeat(MAX_STRATEGY_BYTES + 1));
      const message = async (name: string) => {
        const check = await checkStrategyFile(name, { cwd: dir });
        expect(check).toMatchObject({ valid: false, code: "STRATEGY_INVALID" });
        return check.issues[0]?.message;
      };
      expect(await message("notes.txt")).toContain('unsupported file type ".txt"');
      expect(await message("folder.yaml")).toBe("not a regular file");
      expect(await message("huge.json")).toContain("too large");
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe("custom flow and agent types", () => {
  const registry = new StrategyTypeRegistry();
  registry.registerFlowType("vote", { config: z.strictObject({ quorum: z.number().int().positive() }) });
  registry.registerAgentType("script", { config: z.object({ command: z.string() }) });
  const strategy = (flow: Record<string, unknown>, agent: Record<string, unknown> = { type: "script", config: { command: "ls" } }) =>
    JSON.stringify({ name: "C", version: "1", agents: { a: { model: "mock/echo" }, s: agent }, flow });

  it("a registered flow and agent type validate, config included", () => {
    const check = checkStrategyText(strategy({ type: "vote", config: { quorum: 2 }, steps: [{ agent: "a" }, { agent: "s" }] }), { format: "json", registry });
    expect(check.valid).toBe(true);
  });

  it("a registered type's config is checked by its schema", () => {
    const check = checkStrategyText(strategy({ type: "vote", config: { quorum: 0 }, steps: [{ agent: "s" }] }, { type: "script", config: {} }), { format: "json", registry });
    expect(issuesOf(check).map((i) => i.path)).toEqual(["agents.s.config.command", "flow.config.quorum"]);
  });

  it("unknown types list the registered ones", () => {
    const check = checkStrategyText(strategy({ type: "poll", steps: [{ agent: "a" }] }, { type: "bash" }), { format: "json", registry });
    expect(issuesOf(check).map((i) => i.message)).toEqual([
      'unknown agent type "bash" (known: llm, user, cli, script)',
      'unknown flow type "poll" (known: sequential, broadcast, cycle, vote)',
    ]);
  });

  it("built-in names cannot be registered, and unregistering works", () => {
    expect(() => registry.registerFlowType("cycle", {})).toThrow(/built-in/);
    expect(() => registry.registerAgentType("script", {})).toThrow(/already registered/);
    const unregister = registry.registerFlowType("temp", {});
    expect(registry.flowTypeNames()).toContain("temp");
    unregister();
    expect(registry.flowTypeNames()).not.toContain("temp");
  });
});
