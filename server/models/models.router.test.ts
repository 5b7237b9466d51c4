import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import type { Context } from "../trpc/context";
import { createCallerFactory, router } from "../trpc/init";
import { modelsRouter } from "./models.router";

const createCaller = createCallerFactory(router({ models: modelsRouter }));
const home = mkdtempSync(join(tmpdir(), "yard-models-router-"));
afterAll(() => rmSync(home, { recursive: true, force: true }));

const callerFor = (config: object) => createCaller({ config: { home, ...config }, redact: (s: string) => s } as unknown as Context);

describe("models router", () => {
  it("list and providers never expose an API key", async () => {
    const caller = callerFor({ anthropicApiKey: "sk-ant-secret" });
    const list = await caller.models.list();
    expect(list.find((m) => m.id === "anthropic/claude-sonnet-4-5")).toMatchObject({ available: true, contextWindow: 200000 });
    expect(list.find((m) => m.id === "openai/gpt-4o")).toMatchObject({ available: false, reason: "openai/gpt-4o needs OPENAI_API_KEY; or use mock/demo" });
    const providers = await caller.models.providers();
    expect(providers.map((p) => [p.id, p.configured])).toEqual([["anthropic", true], ["openai", false], ["mock", true]]);
    expect(JSON.stringify([list, providers])).not.toContain("sk-ant-secret");
  });

  it("a bad providers.json surfaces as PROVIDERS_INVALID", async () => {
    writeFileSync(join(home, "providers.json"), '{"x": {}}');
    const err = await callerFor({}).models.list().catch((e: unknown) => e);
    expect(err).toMatchObject({ code: "BAD_REQUEST", cause: { code: "PROVIDERS_INVALID" } });
    expect((err as Error).message).toContain("x.baseUrl: expected an http(s) URL string");
  });
});
