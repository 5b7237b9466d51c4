import type { Usage } from "../../shared/runs";

/**
 * Model prices for budgets, in USD per million tokens. Keys are `provider/model` strings; a key
 * ending in `*` matches every model with that prefix, and the longest match wins. The defaults
 * are list prices when this was written and may be out of date: set SWITCHYARD_MODEL_PRICES (a
 * JSON map in the same shape) to your own. A model with no price counts 0 USD (its tokens still
 * count against a token budget) and the run warns once.
 */
export type Price = { input: number; output: number };
export type PriceTable = Record<string, Price>;

export const DEFAULT_PRICES: PriceTable = {
  "mock/*": { input: 0, output: 0 },
  "anthropic/claude-opus-4-1*": { input: 15, output: 75 },
  "anthropic/claude-opus-4-0*": { input: 15, output: 75 },
  "anthropic/claude-opus-4*": { input: 5, output: 25 },
  "anthropic/claude-sonnet-4*": { input: 3, output: 15 },
  "anthropic/claude-3-7-sonnet*": { input: 3, output: 15 },
  "anthropic/claude-haiku-4*": { input: 1, output: 5 },
  "anthropic/claude-3-5-haiku*": { input: 0.8, output: 4 },
  "openai/gpt-5-nano*": { input: 0.05, output: 0.4 },
  "openai/gpt-5-mini*": { input: 0.25, output: 2 },
  "openai/gpt-5*": { input: 1.25, output: 10 },
  "openai/gpt-4.1-mini*": { input: 0.4, output: 1.6 },
  "openai/gpt-4.1*": { input: 2, output: 8 },
  "openai/gpt-4o-mini*": { input: 0.15, output: 0.6 },
  "openai/gpt-4o*": { input: 2.5, output: 10 },
  "openai/o4-mini*": { input: 1.1, output: 4.4 },
};

export function priceOf(table: PriceTable, model: string): Price | null {
  if (table[model]) return table[model];
  let best: { len: number; price: Price } | null = null;
  for (const [key, price] of Object.entries(table)) {
    if (!key.endsWith("*")) continue;
    const prefix = key.slice(0, -1);
    if (model.startsWith(prefix) && (!best || prefix.length > best.len)) best = { len: prefix.length, price };
  }
  return best?.price ?? null;
}

/** The cost of a call, or null when the model has no price. */
export function costOf(table: PriceTable, model: string, usage: Usage): number | null {
  const price = priceOf(table, model);
  if (!price) return null;
  return (usage.promptTokens * price.input + usage.completionTokens * price.output) / 1_000_000;
}
