import { z } from "zod";

/** Wire shapes of the model registry (`models.list`, `models.providers`). */

export const ProviderKind = z.enum(["anthropic", "openai", "openai-compatible", "mock"]);
export type ProviderKind = z.infer<typeof ProviderKind>;

export const ModelInfo = z.object({
  id: z.string(),
  provider: z.string(),
  label: z.string(),
  contextWindow: z.number(),
  available: z.boolean(),
  /** Why it is not available, and what to do. */
  reason: z.string().optional(),
});
export type ModelInfo = z.infer<typeof ModelInfo>;

export const ProviderInfo = z.object({
  id: z.string(),
  name: z.string(),
  kind: ProviderKind,
  /** Has what it needs (an API key) to be called. */
  configured: z.boolean(),
  /** The API base URL, with any credentials and query string removed; none for mock. */
  baseUrl: z.string().optional(),
});
export type ProviderInfo = z.infer<typeof ProviderInfo>;
