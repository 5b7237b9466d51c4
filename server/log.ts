import { pino, type Logger } from "pino";
import type { Writable } from "node:stream";

export type { Logger };

/**
 * The server's logger: pino, JSON lines, every line scrubbed of configured secrets before it is
 * written, headers that carry credentials censored, and URLs logged without their query string.
 */
export function createLogger(opts: { level: string; redact: (text: string) => string; stream?: Writable | { write(line: string): unknown } }): Logger {
  const out = opts.stream ?? process.stdout;
  const destination = { write: (line: string) => out.write(opts.redact(line)) };
  return pino(
    {
      level: opts.level,
      base: undefined,
      redact: { paths: ["req.headers.authorization", "req.headers.cookie", "headers.authorization", "headers.cookie", "*.apiKey", "*.token"], censor: "[redacted]" },
      serializers: {
        req: (req: { method?: string; url?: string; id?: string }) => ({ id: req.id, method: req.method, path: (req.url ?? "").split("?")[0] }),
      },
    },
    destination,
  );
}
