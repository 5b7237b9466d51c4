import { createServer, StartupError } from "./app";
import { ConfigError, loadConfig, type Config } from "./config";
import { SchemaNewerError } from "./db/client";
import { DatabaseSchemaNewer, DatabaseUnreachable, DatabaseUrlInvalid, DEAD_CONNECTION_EXIT, isDeadConnectionWrite } from "./db/pg/errors";
import { ServerInUse } from "./cluster/cluster.service";
import { redactDatabaseUrl } from "./db/pg/url";

/** Start failures that are the user's to fix: the message, exit 2, no stack. */
const EXPLAINED = [StartupError, ConfigError, SchemaNewerError, DatabaseUnreachable, DatabaseSchemaNewer, DatabaseUrlInvalid, ServerInUse];

/**
 * The only impure entry: read config, open the store, listen, and stop gracefully on SIGINT or
 * SIGTERM. `yard start` and `npm start` both end up here.
 */
export async function main(overrides: Partial<Record<"host" | "port", unknown>> = {}): Promise<void> {
  let config: Config;
  try {
    config = loadConfig(process.env, overrides);
  } catch (err) {
    if (err instanceof ConfigError) {
      process.stderr.write(`switchyard: ${err.message}\n`);
      process.exit(2);
    }
    throw err;
  }
  let server;
  try {
    server = await createServer({ config });
  } catch (err) {
    if (EXPLAINED.some((kind) => err instanceof kind)) {
      process.stderr.write(`switchyard: ${(err as Error).message}\n`);
      process.exit(2);
    }
    throw err;
  }
  try {
    await server.start();
  } catch (err) {
    const e = err as NodeJS.ErrnoException;
    const hint = e.code === "EADDRINUSE" ? ` (port ${config.port} is taken: set SWITCHYARD_PORT)` : "";
    process.stderr.write(`switchyard: cannot listen on ${config.host}:${config.port}: ${e.message}${hint}\n`);
    await server.stop("listen failed").catch(() => {});
    process.exit(1);
  }
  const link = server.loginLink();
  process.stdout.write(
    `\n  Switchyard ${server.services.version} is running\n` +
      `  Dashboard: ${link}${config.token ? "   (one-time login link)" : ""}\n` +
      `  Data:      ${config.home}\n` +
      (config.databaseUrl ? `  Store:     PostgreSQL at ${redactDatabaseUrl(config.databaseUrl)}\n\n` : "\n"),
  );

  // Node still prints the stack and exits 1: this says first what happened and what to do
  process.on("uncaughtExceptionMonitor", (err) => {
    if (isDeadConnectionWrite(err)) process.stderr.write(`switchyard: ${DEAD_CONNECTION_EXIT}\n`);
  });

  let signals = 0;
  const shutdown = (signal: string) => {
    if (++signals > 1) process.exit(130);
    server.log.info({ signal }, "shutting down");
    server.stop(signal).then(
      () => process.exit(0),
      (err) => {
        server.log.error({ err: String(err) }, "shutdown failed");
        process.exit(1);
      },
    );
  };
  process.on("SIGINT", () => shutdown("SIGINT"));
  process.on("SIGTERM", () => shutdown("SIGTERM"));
}

