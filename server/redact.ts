/**
 * Secret scrubbing: every string that leaves the server through a log line, an error message or an
 * event passes through a Redactor built from the configured secrets. Secrets learned later (an
 * account's key, a refreshed token) are added with `add`.
 */
export type Redactor = ((text: string) => string) & { add(secret: string): void };

export function createRedactor(secrets: readonly string[]): Redactor {
  let list: string[] = [];
  const set = (all: readonly string[]) => {
    list = [...new Set(all.filter((s) => s.length >= 4))].sort((a, b) => b.length - a.length);
  };
  set(secrets);
  const redact = (text: string): string => {
    let out = text;
    for (const secret of list) if (out.includes(secret)) out = out.split(secret).join("[redacted]");
    return out;
  };
  return Object.assign(redact, { add: (secret: string) => set([...list, secret]) });
}
