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

/**
 * The AI SDK's warnings (an unsupported setting, a model it does not know) go to our log instead
 * of the console: the first time each is seen at warn, after that at debug (one per model call
 * would flood the log).
 */
export function routeModelWarnings(log: Logger): void {
  const seen = new Set<string>();
  (globalThis as { AI_SDK_LOG_WARNINGS?: unknown }).AI_SDK_LOG_WARNINGS = (o: { warnings: unknown[]; provider?: string; model?: string }) => {
    for (const warning of o.warnings) {
      const key = `${o.provider}/${o.model}:${JSON.stringify(warning)}`;
      const first = !seen.has(key);
      if (first && seen.size < 1000) seen.add(key);
      log[first ? "warn" : "debug"]({ provider: o.provider, model: o.model, warning }, "model warning");
    }
  };
}
