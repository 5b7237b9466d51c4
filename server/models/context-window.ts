/** Context windows of known models, by model id (the part after "provider/"). */

export const DEFAULT_CONTEXT_WINDOW = 128_000;
export const MOCK_CONTEXT_WINDOW = 100_000;

/** First match wins; matched against the last path segment of the model id, lower-cased. */
const TABLE: Array<[RegExp, number]> = [
  [/^claude-/, 200_000],
  [/^gpt-4\.1/, 1_047_576],
  [/^gpt-4o/, 128_000],
  [/^o\d/, 200_000],
];

/** The context window of `provider/model`; `mock/*` is 100000, unknown models 128000. */
export function contextWindowOf(provider: string, modelId: string): number {
  if (provider === "mock") return MOCK_CONTEXT_WINDOW;
  const name = (modelId.split("/").at(-1) ?? modelId).toLowerCase();
  return TABLE.find(([pattern]) => pattern.test(name))?.[1] ?? DEFAULT_CONTEXT_WINDOW;
}
