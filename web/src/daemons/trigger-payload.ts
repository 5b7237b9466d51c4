export type ParsedPayload = { ok: true; value: unknown } | { ok: false; error: string };

/**
 * A trigger payload as typed: JSON when it starts with `{` or `[` (and must then parse), otherwise
 * the text as it is. An empty payload is refused.
 */
export function parsePayload(text: string): ParsedPayload {
  const trimmed = text.trim();
  if (!trimmed) return { ok: false, error: 'Write a payload: some text, or JSON such as {"issue": 42}.' };
  if (!trimmed.startsWith("{") && !trimmed.startsWith("[")) return { ok: true, value: text };
  try {
    return { ok: true, value: JSON.parse(trimmed) as unknown };
  } catch (err) {
    const detail = err instanceof Error ? err.message : String(err);
    return { ok: false, error: `Not valid JSON (${detail}). Fix it, or start with another character to send it as text.` };
  }
}

/** A payload on one line, for the queue: text as is, anything else as compact JSON. */
export function payloadPreview(payload: unknown, max = 160): string {
  let text: string;
  if (typeof payload === "string") text = payload;
  else {
    try {
      text = JSON.stringify(payload) ?? String(payload);
    } catch {
      text = String(payload);
    }
  }
  const flat = text.replace(/\s+/g, " ").trim();
  return flat.length > max ? `${flat.slice(0, max - 1)}…` : flat;
}
