import { statSync } from "node:fs";
import { join } from "node:path";
import { createAnthropic } from "@ai-sdk/anthropic";
import { createOpenAI } from "@ai-sdk/openai";
import { createOpenAICompatible } from "@ai-sdk/openai-compatible";
import type { LanguageModelV3 } from "@ai-sdk/provider";
import type { ModelInfo, ProviderInfo } from "../../shared/models";
import type { Config } from "../config";
import { DomainError } from "../errors";
import { contextWindowOf } from "./context-window";
import { createMockModel, isMockModelId, MOCK_MODEL_IDS, type MockModelOptions } from "./mock";
import { loadProvidersFile, parseProviders, type CompatibleProvider, type ProvidersFile } from "./providers-file";
import { readAheadFetch } from "./read-ahead";

/**
 * The model registry: turns a "provider/model" string into an AI SDK language model.
 * Providers: `anthropic/*`, `openai/*` (Responses API), the named OpenAI-compatible endpoints of
 * `<home>/providers.json`, and `mock/*` (no key, no network). A run's modelOverride replaces
 * every agent's model. Nothing here ever returns an API key.
 */

export type ResolvedModel = {
  model: LanguageModelV3;
  /** The resolved "provider/model" string (the override when one is given). */
  id: string;
  provider: string;
  /** The part after "provider/". */
  modelId: string;
  contextWindow: number;
};

export type ModelRegistryOptions = {
  /** Default `<home>/providers.json`. */
  providersFile?: string;
  /** More OpenAI-compatible endpoints, on top of the file's. */
  providers?: ProvidersFile;
  /** Where `apiKeyEnv` names are looked up (default process.env). */
  env?: Record<string, string | undefined>;
  /** Passed to the provider SDKs (tests, proxies). */
  fetch?: typeof globalThis.fetch;
  mock?: MockModelOptions;
};

export type ModelRegistry = {
  /** Throws MODEL_UNAVAILABLE (unknown provider or model, missing API key) with what to do instead. */
  resolve(modelString: string, options?: { override?: string }): ResolvedModel;
  list(): ModelInfo[];
  providers(): ProviderInfo[];
};

type BuiltIn = { id: "anthropic" | "openai"; name: string; envVar: string; root: string; apiKey?: string; models: Array<[string, string]> };

const ANTHROPIC_MODELS: Array<[string, string]> = [
  ["claude-sonnet-4-5", "Claude Sonnet 4.5"],
  ["claude-opus-4-1", "Claude Opus 4.1"],
  ["claude-haiku-4-5", "Claude Haiku 4.5"],
];
const OPENAI_MODELS: Array<[string, string]> = [
  ["gpt-4.1", "GPT-4.1"],
  ["gpt-4.1-mini", "GPT-4.1 mini"],
  ["gpt-4o", "GPT-4o"],
  ["o4-mini", "o4-mini"],
];
const MOCK_LABELS: Record<(typeof MOCK_MODEL_IDS)[number], string> = {
  demo: "Mock demo (no API key)",
  echo: "Mock echo (repeats the input)",
};

function unavailable(message: string): DomainError<"MODEL_UNAVAILABLE"> {
  return new DomainError("MODEL_UNAVAILABLE", message, { kind: "BAD_REQUEST" });
}

/** `provider/model` split at the first slash; the model part may hold more slashes. */
export function parseModelString(value: string): { provider: string; modelId: string } {
  const match = /^([^/\s]+)\/(\S+)$/.exec(value.trim());
  if (!match?.[1] || !match[2]) {
    throw unavailable(`model ${JSON.stringify(value)} is not "provider/model" (e.g. "anthropic/claude-sonnet-4-5" or "mock/demo")`);
  }
  return { provider: match[1], modelId: match[2] };
}

/** A URL safe to show: no user, password or query string, no trailing slash. */
export function publicUrl(url: string): string {
  try {
    const parsed = new URL(url);
    parsed.username = "";
    parsed.password = "";
    parsed.search = "";
    parsed.hash = "";
    return parsed.toString().replace(/\/+$/, "");
  } catch {
    return "(invalid URL)";
  }
}

export function createModelRegistry(config: Config, extra: ModelRegistryOptions = {}): ModelRegistry {
  const env = extra.env ?? process.env;
  const compatible: ProvidersFile = {
    ...loadProvidersFile(extra.providersFile ?? join(config.home, "providers.json")),
    ...(extra.providers ? parseProviders(extra.providers, "registry options.providers") : {}),
  };
  const builtIns: BuiltIn[] = [
    { id: "anthropic", name: "Anthropic", envVar: "ANTHROPIC_API_KEY", root: config.anthropicBaseUrl ?? "https://api.anthropic.com", apiKey: config.anthropicApiKey, models: ANTHROPIC_MODELS },
    { id: "openai", name: "OpenAI", envVar: "OPENAI_API_KEY", root: config.openaiBaseUrl ?? "https://api.openai.com", apiKey: config.openaiApiKey, models: OPENAI_MODELS },
  ];

  const compatibleKey = (entry: CompatibleProvider): string | undefined => (entry.apiKeyEnv ? env[entry.apiKeyEnv] : entry.apiKey);
  const missingKey = (id: string, envVar: string, where = "") => `${id} needs ${envVar}${where}; or use mock/demo`;
  // streamed answers read off the socket in bursts (see readAhead): a paced reader holds no copy of the answer
  const fetch = readAheadFetch(extra.fetch);

  function resolveBuiltIn(provider: BuiltIn, id: string, modelId: string): LanguageModelV3 {
    if (!provider.apiKey) throw unavailable(missingKey(id, provider.envVar));
    const settings = { baseURL: `${provider.root}/v1`, apiKey: provider.apiKey, fetch };
    return provider.id === "anthropic" ? createAnthropic(settings)(modelId) : createOpenAI(settings).responses(modelId);
  }

  function resolveCompatible(name: string, entry: CompatibleProvider, id: string, modelId: string): LanguageModelV3 {
    const apiKey = compatibleKey(entry);
    if (entry.apiKeyEnv && !apiKey) throw unavailable(missingKey(id, entry.apiKeyEnv, ` (apiKeyEnv of "${name}" in providers.json)`));
    return createOpenAICompatible({ name, baseURL: entry.baseUrl, apiKey, includeUsage: true, fetch })(modelId);
  }

  function knownProviders(): string {
    return ["anthropic", "openai", ...Object.keys(compatible), "mock"].join(", ");
  }

  function resolve(modelString: string, options: { override?: string } = {}): ResolvedModel {
    const id = (options.override ?? modelString).trim();
    const { provider, modelId } = parseModelString(id);
    const builtIn = builtIns.find((p) => p.id === provider);
    const entry = compatible[provider];
    let model: LanguageModelV3;
    if (provider === "mock") {
      if (!isMockModelId(modelId)) throw unavailable(`unknown mock model "${id}" (available: ${MOCK_MODEL_IDS.map((m) => `mock/${m}`).join(", ")})`);
      model = createMockModel(modelId, extra.mock);
    } else if (builtIn) {
      model = resolveBuiltIn(builtIn, id, modelId);
    } else if (entry) {
      model = resolveCompatible(provider, entry, id, modelId);
    } else {
      throw unavailable(
        `unknown model provider "${provider}" in "${id}" (known: ${knownProviders()}); add an OpenAI-compatible endpoint named "${provider}" to ${join(config.home, "providers.json")}, or use mock/demo`,
      );
    }
    return { model, id, provider, modelId, contextWindow: entry?.contextWindow ?? contextWindowOf(provider, modelId) };
  }

  function list(): ModelInfo[] {
    const models: ModelInfo[] = [];
    for (const p of builtIns) {
      for (const [modelId, label] of p.models) {
        const id = `${p.id}/${modelId}`;
        models.push({ id, provider: p.id, label, contextWindow: contextWindowOf(p.id, modelId), available: !!p.apiKey, ...(p.apiKey ? {} : { reason: missingKey(id, p.envVar) }) });
      }
    }
    for (const [name, entry] of Object.entries(compatible)) {
      const missing = entry.apiKeyEnv && !compatibleKey(entry) ? entry.apiKeyEnv : undefined;
      for (const modelId of entry.models ?? []) {
        const id = `${name}/${modelId}`;
        models.push({
          id,
          provider: name,
          label: `${modelId} (${entry.name ?? name})`,
          contextWindow: entry.contextWindow ?? contextWindowOf(name, modelId),
          available: !missing,
          ...(missing ? { reason: missingKey(id, missing) } : {}),
        });
      }
    }
    for (const modelId of MOCK_MODEL_IDS) {
      models.push({ id: `mock/${modelId}`, provider: "mock", label: MOCK_LABELS[modelId], contextWindow: contextWindowOf("mock", modelId), available: true });
    }
    return models;
  }

  function providers(): ProviderInfo[] {
    return [
      ...builtIns.map((p): ProviderInfo => ({ id: p.id, name: p.name, kind: p.id, configured: !!p.apiKey, baseUrl: publicUrl(`${p.root}/v1`) })),
      ...Object.entries(compatible).map(([id, entry]): ProviderInfo => ({
        id,
        name: entry.name ?? id,
        kind: "openai-compatible",
        configured: !entry.apiKeyEnv || !!compatibleKey(entry),
        baseUrl: publicUrl(entry.baseUrl),
      })),
      { id: "mock", name: "Mock (no API key)", kind: "mock", configured: true },
    ];
  }

  return { resolve, list, providers };
}

const cache = new WeakMap<Config, { registry: ModelRegistry; stamp: string }>();

function providersStamp(path: string): string {
  try {
    const stat = statSync(path);
    return `${stat.mtimeMs}:${stat.size}`;
  } catch {
    return "none";
  }
}

/** The registry of a config, rebuilt when `<home>/providers.json` changes (so edits need no restart). */
export function modelRegistryFor(config: Config): ModelRegistry {
  const stamp = providersStamp(join(config.home, "providers.json"));
  const cached = cache.get(config);
  if (cached?.stamp === stamp) return cached.registry;
  const registry = createModelRegistry(config);
  cache.set(config, { registry, stamp });
  return registry;
}
