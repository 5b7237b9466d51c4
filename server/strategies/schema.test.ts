/** The shared schema used on its own, as the dashboard does (shared/ holds no tests: it imports zod alone). */
import { describe, expect, it } from "vitest";
import {
  AgentDef,
  GetStrategyInput,
  isAgentStep,
  isCliAgent,
  isCustomAgent,
  isCycleFlow,
  isLlmAgent,
  isUserAgent,
  formatPath,
  ModelString,
  resolveToolName,
  Strategy,
  ValidateStrategyInput,
} from "../../shared/strategy";

const doc = {
  name: "S",
  version: "1.0",
  agents: { a: { model: "mock/echo" }, u: { type: "user" }, c: { type: "cli", provider: "codex" }, x: { type: "vote", config: { n: 1 } } },
  flow: { type: "cycle", cycles: "Infinity", observer: "a", steps: [{ agent: "u" }, { type: "broadcast", steps: [{ agent: "a" }, { agent: "c" }] }] },
};

describe("the Strategy schema (the wire contract)", () => {
  it("parses a whole strategy tree, nested flows and custom types included", () => {
    const strategy = Strategy.parse(doc);
    expect(strategy).toEqual(doc);
    expect(isCycleFlow(strategy.flow)).toBe(true);
    const [first, second] = strategy.flow.steps;
    expect(first && isAgentStep(first)).toBe(true);
    expect(second && !isAgentStep(second) && second.type).toBe("broadcast");
  });

  it("is strict at every level", () => {
    const nested = { ...doc, flow: { ...doc.flow, steps: [{ agent: "u" }, { type: "broadcast", steps: [{ agent: "a", colour: "red" }] }] } };
    expect(Strategy.safeParse(nested).success).toBe(false);
    const top = Strategy.safeParse({ ...doc, extra: 1 });
    expect(top.error?.issues[0]?.message).toMatch(/^unknown key "extra" \(allowed: name, version, description, budget, permissions, agents, flow\)$/);
  });

  it("tells agent kinds apart", () => {
    const agents = Object.values(Strategy.parse(doc).agents);
    expect(agents.map((a) => [isLlmAgent(a), isUserAgent(a), isCliAgent(a), isCustomAgent(a)])).toEqual([
      [true, false, false, false],
      [false, true, false, false],
      [false, false, true, false],
      [false, false, false, true],
    ]);
    expect(AgentDef.safeParse({ type: "user", model: "mock/echo" }).success).toBe(false);
  });

  it("checks model strings as provider/model with non-empty parts", () => {
    for (const ok of ["mock/echo", "mock/demo", "anthropic/claude-sonnet-4-5", "openrouter/meta-llama/llama-3"]) expect(ModelString.safeParse(ok).success).toBe(true);
    for (const bad of ["gpt-4o", "/x", "x/", "a/ b", ""]) expect(ModelString.safeParse(bad).success, bad).toBe(false);
  });

  it("maps tool aliases to built-in tools", () => {
    expect(["read", "grep", "glob", "todo"].map((t) => resolveToolName(t as "read"))).toEqual(["read_file", "search_files", "glob", "todo"]);
  });

  it("formats paths as the issues show them", () => {
    expect(formatPath([])).toBe("");
    expect(formatPath(["agents", "a", "colour"])).toBe("agents.a.colour");
    expect(formatPath(["flow", "steps", 2, "steps", 0, "agent"])).toBe("flow.steps[2].steps[0].agent");
    expect(formatPath(["agents", "my agent", "model"])).toBe('agents["my agent"].model');
    expect(formatPath(["agents", "code-reviewer"])).toBe("agents.code-reviewer");
  });

  it("API inputs: get takes path or id, validate takes text+format or a path", () => {
    expect(GetStrategyInput.safeParse({ id: "demo" }).success).toBe(true);
    expect(GetStrategyInput.safeParse({}).success).toBe(false);
    expect(ValidateStrategyInput.safeParse({ text: "x", format: "yml" }).success).toBe(true);
    expect(ValidateStrategyInput.safeParse({ text: "x", format: "toml" }).success).toBe(false);
    expect(ValidateStrategyInput.safeParse({ path: "s.yaml", cwd: "/tmp" }).success).toBe(true);
  });
});
