import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { BUNDLED_STRATEGIES_DIR, discoverStrategies, resolveStrategyPath } from "./discovery";
import { StrategyError } from "./errors";

const strategy = (name: string, extra = "") =>
  `name: ${name}\nversion: "1"\ndescription: ${name} strategy\nagents:\n  a:\n    model: mock/echo\n${extra}flow:\n  type: sequential\n  steps:\n    - agent: a\n`;

let root: string;
let cwd: string;
let home: string;

function write(path: string, text: string): void {
  mkdirSync(dirname(path), { recursive: true });
  writeFileSync(path, text);
}

beforeAll(() => {
  root = mkdtempSync(join(tmpdir(), "yard-discovery-"));
  cwd = join(root, "project");
  home = join(root, "home");
  write(join(cwd, "strategies/alpha.yaml"), strategy("Alpha"));
  write(join(cwd, "strategies/broken.yaml"), strategy("Broken").replace("model: mock/echo", "model: mock/echo\n    colour: blue"));
  write(join(cwd, "strategies/demo.yml"), strategy("Local Demo")); // shadows the bundled demo
  write(join(cwd, "strategies/notes.md"), "not a strategy");
  write(join(cwd, ".comma/strategies/beta.json"), JSON.stringify({ name: "Beta", version: "1", agents: { a: { model: "mock/echo" } }, flow: { type: "sequential", steps: [{ agent: "a" }] } }));
  write(join(home, "strategies/gamma.yaml"), strategy("Gamma", "    skills: [review]\n"));
  write(join(cwd, "custom/m.jsonc"), `// from the manifest\n${JSON.stringify({ name: "Manifested", version: "1", agents: { a: { model: "mock/echo" } }, flow: { type: "sequential", steps: [{ agent: "a" }] } })}`);
  write(join(cwd, "comma-project.json"), JSON.stringify({ name: "P", strategies: { m: { path: "custom/m.jsonc", description: "From the manifest" }, alpha: { path: "strategies/alpha.yaml" } } }));
  write(join(cwd, "sub/other-project.json"), JSON.stringify({ name: "Q", strategies: ["../custom/m.jsonc"] }));
  write(join(cwd, "bad-project.json"), JSON.stringify({ name: "R", strategies: 3 }));
});

afterAll(() => rmSync(root, { recursive: true, force: true }));

describe("discoverStrategies", () => {
  it("lists cwd, .comma, home, manifest and bundled strategies, in that order", async () => {
    const entries = await discoverStrategies({ cwd, home });
    const summary = entries.map((e) => `${e.source}:${e.id}:${e.valid ? "ok" : "bad"}`);
    expect(summary).toEqual([
      "cwd:alpha:ok",
      "cwd:broken:bad",
      "cwd:demo:ok",
      "comma:beta:ok",
      "home:gamma:ok",
      "manifest:m:ok", // manifest's "alpha" is the same file as cwd's: listed once
      "bundled:code-review:ok",
      "bundled:bundled:demo.yaml:ok",
      "bundled:iterative-refinement:ok",
      "bundled:research-team:ok",
      "bundled:simple:ok",
      "bundled:tool-agent:ok",
    ]);
  });

  it("gives names, descriptions, paths, errors and warnings", async () => {
    const byId = new Map((await discoverStrategies({ cwd, home })).map((e) => [e.id, e]));
    expect(byId.get("alpha")).toMatchObject({ name: "Alpha", description: "Alpha strategy", path: join(cwd, "strategies/alpha.yaml"), warnings: [] });
    expect(byId.get("m")).toMatchObject({ name: "Manifested", description: "From the manifest", path: join(cwd, "custom/m.jsonc") });
    expect(byId.get("broken")).toMatchObject({ name: "broken", valid: false, error: 'strategies/broken.yaml:7:5 agents.a.colour: unknown key "colour" (allowed: type, description, model, systemPrompt, systemPromptTemplate, tools, maxSteps, modelOptions, providerOptions, outputSchema, mcpServers, skills, context)' });
    expect(byId.get("gamma")?.warnings).toEqual([{ path: "agents.a.skills", message: "skills are accepted but not loaded yet", line: 7, column: 5 }]);
    expect(byId.get("bundled:demo.yaml")).toMatchObject({ name: "Switchyard Demo", path: join(BUNDLED_STRATEGIES_DIR, "demo.yaml"), valid: true });
  });

  it("reads a manifest given relative to cwd (the list form too)", async () => {
    const entries = await discoverStrategies({ cwd, manifestPath: "sub/other-project.json", bundled: false });
    expect(entries.find((e) => e.source === "manifest")).toMatchObject({ id: "m", path: join(cwd, "custom/m.jsonc"), valid: true });
  });

  it("lists a broken or missing manifest as an invalid entry instead of failing", async () => {
    const bad = await discoverStrategies({ cwd, manifestPath: "bad-project.json", bundled: false });
    expect(bad.find((e) => e.source === "manifest")).toMatchObject({ id: "bad-project", valid: false });
    expect(bad.find((e) => e.source === "manifest")?.error).toContain("strategies");
    const missing = await discoverStrategies({ cwd, manifestPath: "nope.json", bundled: false });
    expect(missing.find((e) => e.source === "manifest")?.error).toBe(`Manifest not found: ${join(cwd, "nope.json")}`);
  });

  it("works in an empty directory with only the bundled examples", async () => {
    const empty = join(root, "empty");
    mkdirSync(empty, { recursive: true });
    const entries = await discoverStrategies({ cwd: empty, home: join(root, "no-home") });
    expect(entries.map((e) => e.id)).toEqual(["code-review", "demo", "iterative-refinement", "research-team", "simple", "tool-agent"]);
    expect(entries.every((e) => e.valid && e.source === "bundled")).toBe(true);
  });
});

describe("resolveStrategyPath", () => {
  it("resolves a path relative to the run's cwd, or absolute", async () => {
    expect(await resolveStrategyPath("strategies/alpha.yaml", cwd)).toBe(join(cwd, "strategies/alpha.yaml"));
    expect(await resolveStrategyPath("./custom/m.jsonc", cwd)).toBe(join(cwd, "custom/m.jsonc"));
    expect(await resolveStrategyPath(join(home, "strategies/gamma.yaml"), "/")).toBe(join(home, "strategies/gamma.yaml"));
  });

  it("accepts a discovered id", async () => {
    expect(await resolveStrategyPath("beta", cwd)).toBe(join(cwd, ".comma/strategies/beta.json"));
    expect(await resolveStrategyPath("gamma", cwd, { home })).toBe(join(home, "strategies/gamma.yaml"));
    expect(await resolveStrategyPath("m", cwd)).toBe(join(cwd, "custom/m.jsonc"));
    expect(await resolveStrategyPath("demo", cwd)).toBe(join(cwd, "strategies/demo.yml"));
    expect(await resolveStrategyPath("bundled:demo.yaml", cwd)).toBe(join(BUNDLED_STRATEGIES_DIR, "demo.yaml"));
    expect(await resolveStrategyPath("demo", root)).toBe(join(BUNDLED_STRATEGIES_DIR, "demo.yaml"));
  });

  it("fails with STRATEGY_NOT_FOUND naming the path (and the ids for an id)", async () => {
    const byPath = await resolveStrategyPath("strategies/nope.yaml", cwd).catch((e: unknown) => e);
    expect(byPath).toBeInstanceOf(StrategyError);
    expect(byPath).toMatchObject({ code: "STRATEGY_NOT_FOUND", message: `Strategy file not found: ${join(cwd, "strategies/nope.yaml")}` });
    const byId = await resolveStrategyPath("nope", cwd).catch((e: unknown) => e);
    expect((byId as StrategyError).message).toMatch(/no strategy has the id "nope"; known ids: alpha, broken, demo, beta/);
  });
});
