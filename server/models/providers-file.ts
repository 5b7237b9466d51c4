import { existsSync, readFileSync } from "node:fs";
import { z } from "zod";
import { DomainError } from "../errors";

/**
 * `<home>/providers.json`: named OpenAI-compatible endpoints (Ollama, LM Studio, vLLM, OpenRouter...).
 *   {"ollama": {"baseUrl": "http://127.0.0.1:11434/v1", "models": ["llama3"]}}
 * A model string `ollama/llama3` then resolves through that endpoint.
 */

export const RESERVED_PROVIDER_IDS = ["anthropic", "openai", "mock"] as const;

const httpUrl = z
  .string({ error: "expected an http(s) URL string" })
  .url({ error: "expected an http(s) URL" })
  .refine((v) => /^https?:\/\//.test(v), { error: "expected an http(s) URL" })
  .transform((v) => v.replace(/\/+$/, ""));

export const CompatibleProvider = z.strictObject(
  {
    /** The API root including its version path, e.g. `http://127.0.0.1:11434/v1`. */
    baseUrl: httpUrl,
    /** Display name (default: the key). */
    name: z.string({ error: "expected a string" }).min(1).optional(),
    apiKey: z.string({ error: "expected a string" }).min(1).optional(),
    /** The environment variable holding the API key (keeps the key out of the file). */
    apiKeyEnv: z.string({ error: "expected an environment variable name" }).regex(/^[A-Za-z_][A-Za-z0-9_]*$/).optional(),
    /** Models listed in the model picker; any model id still resolves. */
    models: z.array(z.string().min(1), { error: "expected a list of model ids" }).optional(),
    /** Context window of this endpoint's models (default: the known-model table, else 128000). */
    contextWindow: z.number({ error: "expected a positive integer" }).int().positive().optional(),
  },
  {
    error: (issue) =>
      issue.code === "unrecognized_keys"
        ? `unknown key ${issue.keys.map((k) => JSON.stringify(k)).join(", ")} (allowed: baseUrl, name, apiKey, apiKeyEnv, models, contextWindow)`
        : "expected an object like {\"baseUrl\": \"http://127.0.0.1:11434/v1\"}",
  },
);
export type CompatibleProvider = z.infer<typeof CompatibleProvider>;

const PROVIDER_ID = /^[a-z0-9][a-z0-9_-]*$/i;

export const ProvidersFile = z
  .record(z.string(), CompatibleProvider, { error: "expected a JSON object of named providers" })
  .superRefine((value, ctx) => {
    for (const id of Object.keys(value)) {
      if (!PROVIDER_ID.test(id)) ctx.addIssue({ code: "custom", path: [id], message: "a provider name uses letters, digits, - and _" });
      else if ((RESERVED_PROVIDER_IDS as readonly string[]).includes(id.toLowerCase())) {
        ctx.addIssue({ code: "custom", path: [id], message: `is a built-in provider (${RESERVED_PROVIDER_IDS.join(", ")}); pick another name` });
      }
    }
  });
export type ProvidersFile = z.infer<typeof ProvidersFile>;

function invalid(path: string, message: string): DomainError<"PROVIDERS_INVALID"> {
  return new DomainError("PROVIDERS_INVALID", `${path}: ${message}`, { kind: "BAD_REQUEST" });
}

/** Validates parsed JSON; issues name the key: `ollama.baseUrl: expected an http(s) URL`. */
export function parseProviders(data: unknown, path: string): ProvidersFile {
  const parsed = ProvidersFile.safeParse(data);
  if (parsed.success) return parsed.data;
  const lines = parsed.error.issues.map((issue) => {
    const where = issue.path.map(String).join(".");
    return where ? `${where}: ${issue.message}` : issue.message;
  });
  throw invalid(path, lines.join("; "));
}

/** Reads the file; a missing file is no providers, a bad one a PROVIDERS_INVALID error naming it. */
export function loadProvidersFile(path: string): ProvidersFile {
  if (!existsSync(path)) return {};
  let data: unknown;
  try {
    data = JSON.parse(readFileSync(path, "utf8"));
  } catch (err) {
    throw invalid(path, `not valid JSON (${(err as Error).message})`);
  }
  return parseProviders(data, path);
}
