/** A plain JSON object (not an array, not null). */
export function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === "object" && v !== null && !Array.isArray(v);
}

/** `text` as a JSON object, or null when it is not one (a CLI's config that is JSONC, an array...). */
export function parseJsonObject(text: string): Record<string, unknown> | null {
  try {
    const v = JSON.parse(text) as unknown;
    return isObject(v) ? v : null;
  } catch {
    return null;
  }
}
