import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { streamText } from "ai";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import type { Config } from "../config";
import { isDomainError } from "../errors";
import { startFakeModelServer, type FakeModelServer } from "../testing/fake-model";
import { createModelRegistry, modelRegistryFor, publicUrl, type ModelRegistryOptions } from "./models.service";

let fake: FakeModelServer;
let home: string;

beforeAll(async () => {
  fake = await startFakeModelServer();
});
afterAll(() => fake.close());

beforeEach(() => {
  fake.reset();
  home = mkdtempSync(join(tmpdir(), "yard-models-"));
  return () => rmSync(home, { recursive: true, force: true });
});

const configOf = (over: Partial<Config> = {}): Config => ({ home, ...over }) as Config;
const registry = (over: Partial<Config> = {}, extra: ModelRegistryOptions = {}) => createModelRegistry(configOf(over), extra);

function errorOf(fn: () => unknown): { code?: string; message: string } {
  try {
    fn();
  } catch (err) {
    return { code: isDomainError(err) ? err.code : undefined, message: (err as Error).message };
  }
  throw new Error("expected an error");
}

async function scriptedText(model: Parameters<typeof streamText>[0]["model"]): Promise<{ deltas: string[]; text: string }> {
  const result = streamText({ model, system: "CHUNK[4]", prompt: "SAY[Draft from writer.]", maxRetries: 0 });
  const deltas: string[] = [];
  for await (const delta of result.textStream) deltas.push(delta);
  return { deltas, text: await result.text };
}

describe("resolving against the fake model server", () => {
  it("anthropic/*: baseURL is the config root + /v1, the key from config", async () => {
    const resolved = registry({ anthropicBaseUrl: fake.url, anthropicApiKey: "ak" }).resolve("anthropic/claude-sonnet-4-5");
    expect(resolved).toMatchObject({ id: "anthropic/claude-sonnet-4-5", provider: "anthropic", modelId: "claude-sonnet-4-5", contextWindow: 200000 });
    expect(await scriptedText(resolved.model)).toEqual({ deltas: ["Draf", "t fr", "om w", "rite", "r."], text: "Draft from writer." });
    expect(fake.requests[0]).toMatchObject({ api: "anthropic", path: "/v1/messages", apiKey: "ak", model: "claude-sonnet-4-5" });
  });

  it("openai/*: the Responses API by default", async () => {
    const resolved = registry({ openaiBaseUrl: fake.url, openaiApiKey: "ok" }).resolve("openai/gpt-4.1");
    expect(resolved.contextWindow).toBe(1047576);
    expect((await scriptedText(resolved.model)).text).toBe("Draft from writer.");
    expect(fake.requests[0]).toMatchObject({ api: "responses", path: "/v1/responses", apiKey: "ok", model: "gpt-4.1" });
  });

  it("a named OpenAI-compatible endpoint from <home>/providers.json", async () => {
    writeFileSync(join(home, "providers.json"), JSON.stringify({ local: { baseUrl: fake.baseURL, apiKey: "lk", models: ["llama3"], contextWindow: 8192 } }));
    const models = registry();
    const resolved = models.resolve("local/llama3");
    expect(resolved).toMatchObject({ id: "local/llama3", provider: "local", contextWindow: 8192 });
    expect((await scriptedText(resolved.model)).text).toBe("Draft from writer.");
    expect(fake.requests[0]).toMatchObject({ api: "chat", path: "/v1/chat/completions", apiKey: "lk", model: "llama3" });
    expect(models.list().find((m) => m.provider === "local")).toEqual({ id: "local/llama3", provider: "local", label: "llama3 (local)", contextWindow: 8192, available: true });
  });

  it("a compatible endpoint may take its key from an environment variable", async () => {
    const providers = { router: { baseUrl: fake.baseURL, apiKeyEnv: "ROUTER_KEY" } };
    const err = errorOf(() => registry({}, { providers, env: {} }).resolve("router/x"));
    expect(err).toEqual({ code: "MODEL_UNAVAILABLE", message: 'router/x needs ROUTER_KEY (apiKeyEnv of "router" in providers.json); or use mock/demo' });
    const resolved = registry({}, { providers, env: { ROUTER_KEY: "rk" } }).resolve("router/x");
    await scriptedText(resolved.model);
    expect(fake.requests[0]?.apiKey).toBe("rk");
  });

  it("modelOverride replaces the agent's model", async () => {
    const resolved = registry({ anthropicApiKey: "ak", anthropicBaseUrl: fake.url }).resolve("openai/gpt-4o", { override: "anthropic/claude-haiku-4-5" });
    expect(resolved).toMatchObject({ id: "anthropic/claude-haiku-4-5", provider: "anthropic", contextWindow: 200000 });
    expect(registry().resolve("anthropic/claude-x", { override: "mock/echo" })).toMatchObject({ id: "mock/echo", contextWindow: 100000 });
  });
});

describe("context windows", () => {
  it("come from the known-model table, 128000 otherwise", () => {
    const models = registry({ anthropicApiKey: "a", openaiApiKey: "o" }, { providers: { ollama: { baseUrl: "http://127.0.0.1:11434/v1" } } });
    const windows = ["anthropic/claude-opus-4-1", "openai/gpt-4o-mini", "openai/gpt-4.1-nano", "openai/o3", "openai/o4-mini", "openai/gpt-5", "mock/demo", "ollama/llama3"].map(
      (id) => models.resolve(id).contextWindow,
    );
    expect(windows).toEqual([200000, 128000, 1047576, 200000, 200000, 128000, 100000, 128000]);
  });
});

describe("errors a user can act on", () => {
  it("a missing API key names the variable and the mock alternative", () => {
    expect(errorOf(() => registry().resolve("anthropic/claude-x"))).toEqual({
      code: "MODEL_UNAVAILABLE",
      message: "anthropic/claude-x needs ANTHROPIC_API_KEY; or use mock/demo",
    });
    expect(errorOf(() => registry().resolve("openai/gpt-4o")).message).toBe("openai/gpt-4o needs OPENAI_API_KEY; or use mock/demo");
  });

  it("an unknown provider, mock model or malformed string", () => {
    const unknown = errorOf(() => registry().resolve("acme/model-1"));
    expect(unknown.code).toBe("MODEL_UNAVAILABLE");
    expect(unknown.message).toContain('unknown model provider "acme" in "acme/model-1" (known: anthropic, openai, mock)');
    expect(unknown.message).toContain(join(home, "providers.json"));
    expect(errorOf(() => registry().resolve("mock/nope")).message).toBe('unknown mock model "mock/nope" (available: mock/demo, mock/echo)');
    expect(errorOf(() => registry().resolve("gpt-4o")).message).toContain('model "gpt-4o" is not "provider/model"');
  });

  it("a bad providers.json fails with PROVIDERS_INVALID naming the file and the key", () => {
    const file = join(home, "providers.json");
    writeFileSync(file, "{ not json");
    const notJson = errorOf(() => registry());
    expect(notJson.code).toBe("PROVIDERS_INVALID");
    expect(notJson.message).toMatch(new RegExp(`^${file.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")}: not valid JSON`));

    writeFileSync(file, JSON.stringify({ ollama: { baseUrl: "localhost:11434", models: "llama3", colour: 1 } }));
    const bad = errorOf(() => registry());
    expect(bad.message).toContain(`${file}: `);
    expect(bad.message).toContain('ollama: unknown key "colour"');
    expect(bad.message).toContain("ollama.baseUrl: expected an http(s) URL");
    expect(bad.message).toContain("ollama.models: expected a list of model ids");

    writeFileSync(file, JSON.stringify({ openai: { baseUrl: "http://x/v1" } }));
    expect(errorOf(() => registry()).message).toContain("openai: is a built-in provider");
    writeFileSync(file, "[]");
    expect(errorOf(() => registry()).message).toBe(`${file}: expected a JSON object of named providers`);
  });
});

describe("list and providers", () => {
  it("list marks models without a key unavailable, with the reason; mock is always available", () => {
    const list = registry({ openaiApiKey: "secret-openai" }).list();
    expect(list.find((m) => m.id === "anthropic/claude-sonnet-4-5")).toMatchObject({ available: false, reason: "anthropic/claude-sonnet-4-5 needs ANTHROPIC_API_KEY; or use mock/demo" });
    expect(list.find((m) => m.id === "openai/gpt-4.1")).toMatchObject({ available: true, contextWindow: 1047576 });
    expect(list.filter((m) => m.provider === "mock").map((m) => [m.id, m.available, m.contextWindow])).toEqual([
      ["mock/demo", true, 100000],
      ["mock/echo", true, 100000],
    ]);
    expect(JSON.stringify(list)).not.toContain("secret-openai");
  });

  it("providers report configured and a base URL without secrets", () => {
    writeFileSync(join(home, "providers.json"), JSON.stringify({ remote: { baseUrl: "https://user:pw@llm.example.com/v1?key=abc", apiKey: "secret-remote" } }));
    const providers = registry({ anthropicApiKey: "secret-anthropic", anthropicBaseUrl: "http://127.0.0.1:9999" }).providers();
    expect(providers).toEqual([
      { id: "anthropic", name: "Anthropic", kind: "anthropic", configured: true, baseUrl: "http://127.0.0.1:9999/v1" },
      { id: "openai", name: "OpenAI", kind: "openai", configured: false, baseUrl: "https://api.openai.com/v1" },
      { id: "remote", name: "remote", kind: "openai-compatible", configured: true, baseUrl: "https://llm.example.com/v1" },
      { id: "mock", name: "Mock (no API key)", kind: "mock", configured: true },
    ]);
    expect(JSON.stringify(providers)).not.toMatch(/secret|pw|abc/);
    expect(publicUrl("not a url")).toBe("(invalid URL)");
  });

  it("modelRegistryFor rebuilds when providers.json changes", () => {
    const config = configOf();
    const first = modelRegistryFor(config);
    expect(modelRegistryFor(config)).toBe(first);
    writeFileSync(join(home, "providers.json"), JSON.stringify({ lab: { baseUrl: "http://127.0.0.1:1/v1", models: ["m"] } }));
    const second = modelRegistryFor(config);
    expect(second).not.toBe(first);
    expect(second.providers().map((p) => p.id)).toContain("lab");
  });
});
