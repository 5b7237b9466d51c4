import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { TRPCError } from "@trpc/server";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Context } from "../trpc/context";
import { createCallerFactory, router } from "../trpc/init";
import { strategiesRouter } from "./strategies.router";

const createCaller = createCallerFactory(router({ strategies: strategiesRouter }));
let root: string;
let caller: ReturnType<typeof createCaller>;

beforeAll(() => {
  root = mkdtempSync(join(tmpdir(), "yard-strategies-router-"));
  mkdirSync(join(root, "strategies"));
  writeFileSync(join(root, "strategies/bad.yaml"), 'name: Bad\nversion: "1"\nagents: {a: {model: mock/echo}}\nflow: {type: sequential, steps: [{agent: ghost}]}\n');
  // Only what these procedures reach: the home folder and the redactor of the error formatter.
  const ctx = { config: { home: join(root, "home") }, redact: (s: string) => s } as unknown as Context;
  caller = createCaller(ctx);
});

afterAll(() => rmSync(root, { recursive: true, force: true }));

describe("strategies router", () => {
  it("list returns the discovered entries, broken ones included", async () => {
    const entries = await caller.strategies.list({ cwd: root });
    expect(entries[0]).toMatchObject({ id: "bad", source: "cwd", valid: false });
    expect(entries[0]?.error).toContain('strategies/bad.yaml:4:35 flow.steps[0].agent: unknown agent "ghost" (defined: a)');
    expect(entries.filter((e) => e.source === "bundled")).toHaveLength(6);
  });

  it("get by id returns the strategy, its flow tree and graph", async () => {
    const got = await caller.strategies.get({ id: "demo", cwd: root });
    expect(got.strategy.name).toBe("Switchyard Demo");
    expect(got.flowTree).toBe(got.strategy.flow);
    expect(got.graph.nodes.map((n) => n.kind)).toEqual(["sequential", "agent", "broadcast", "agent", "agent", "cycle", "agent", "agent"]);
    expect(got.warnings).toEqual([]);
    expect((await caller.strategies.get({ path: got.path })).strategy.name).toBe("Switchyard Demo");
  });

  it("get throws the domain error for an invalid or missing strategy", async () => {
    const invalid = await caller.strategies.get({ path: "strategies/bad.yaml", cwd: root }).catch((e: unknown) => e);
    expect(invalid).toBeInstanceOf(TRPCError);
    expect(invalid).toMatchObject({ code: "BAD_REQUEST", cause: { code: "STRATEGY_INVALID" } });
    const missing = await caller.strategies.get({ id: "nope", cwd: root }).catch((e: unknown) => e);
    expect(missing).toMatchObject({ code: "NOT_FOUND", cause: { code: "STRATEGY_NOT_FOUND" } });
  });

  it("get needs exactly one of path and id", async () => {
    await expect(caller.strategies.get({ cwd: root })).rejects.toThrow(/give either path or id/);
    await expect(caller.strategies.get({ id: "demo", path: "x.yaml" })).rejects.toThrow(/give either path or id/);
  });

  it("validate returns issues as data, for text and for a file", async () => {
    const text = await caller.strategies.validate({ text: "name: X\nversion: 1\n", format: "yaml", fileName: "x.yaml" });
    expect(text.valid).toBe(false);
    expect(text.issues.map((i) => [i.path, i.line])).toEqual([["version", 2], ["agents", 1], ["flow", 1]]);
    const file = await caller.strategies.validate({ path: "strategies/bad.yaml", cwd: root });
    expect(file).toMatchObject({ valid: false, issues: [{ path: "flow.steps[0].agent", line: 4 }] });
    const missing = await caller.strategies.validate({ path: "nope.yaml", cwd: root });
    expect(missing).toMatchObject({ valid: false, issues: [{ message: `Strategy file not found: ${join(root, "nope.yaml")}` }] });
    const ok = await caller.strategies.validate({ text: '{"name":"X","version":"1","agents":{"a":{"model":"mock/echo","skills":["s"]}},"flow":{"type":"sequential","steps":[{"agent":"a"}]}}', format: "json" });
    expect(ok).toMatchObject({ valid: true, issues: [], warnings: [{ path: "agents.a.skills" }] });
  });
});
