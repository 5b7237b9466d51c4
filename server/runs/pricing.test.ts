import { describe, expect, it } from "vitest";
import { costOf, DEFAULT_PRICES, priceOf } from "./pricing";

describe("model prices", () => {
  it("matches exact keys first, then the longest prefix", () => {
    const table = { ...DEFAULT_PRICES, "anthropic/claude-opus-4-5-exact": { input: 1, output: 2 } };
    expect(priceOf(table, "anthropic/claude-opus-4-5-exact")).toEqual({ input: 1, output: 2 });
    expect(priceOf(table, "anthropic/claude-opus-4-1-20250805")).toEqual({ input: 15, output: 75 });
    expect(priceOf(table, "anthropic/claude-opus-4-6")).toEqual({ input: 5, output: 25 });
    expect(priceOf(table, "openai/gpt-5-mini")).toEqual({ input: 0.25, output: 2 });
    expect(priceOf(table, "local/llama")).toBeNull();
  });

  it("prices a call per million tokens; unknown models have no cost", () => {
    expect(costOf(DEFAULT_PRICES, "anthropic/claude-sonnet-4-5", { promptTokens: 1_000_000, completionTokens: 100_000 })).toBeCloseTo(3 + 1.5);
    expect(costOf(DEFAULT_PRICES, "mock/echo", { promptTokens: 500, completionTokens: 500 })).toBe(0);
    expect(costOf(DEFAULT_PRICES, "vllm/qwen", { promptTokens: 1, completionTokens: 1 })).toBeNull();
  });
});
