/**
 * Secret scrubbing: every string that leaves the server through a log line, an error message or an
 * event passes through a Redactor built from the configured secrets.
 */
export type Redactor = (text: string) => string;

export function createRedactor(secrets: readonly string[]): Redactor {
  const list = [...new Set(secrets.filter((s) => s.length >= 4))].sort((a, b) => b.length - a.length);
  if (list.length === 0) return (text) => text;
  return (text) => {
    let out = text;
    for (const secret of list) if (out.includes(secret)) out = out.split(secret).join("[redacted]");
    return out;
  };
}
