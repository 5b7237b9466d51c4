import { existsSync, readFileSync } from "node:fs";
import { homedir } from "node:os";
import { isAbsolute, join, resolve } from "node:path";
import { z } from "zod";
import { REPO_ROOT } from "./paths";

/**
 * Configuration: environment variables over an optional JSON config file over defaults.
 * A bad value fails at start with a message naming the variable.
 */

const LOG_LEVELS = ["fatal", "error", "warn", "info", "debug", "trace", "silent"] as const;

const emptyToUndefined = (v: unknown) => (typeof v === "string" && v.trim() === "" ? undefined : v);

const httpUrl = z
  .string()
  .url("expected an http(s) URL")
  .refine((v) => /^https?:\/\//.test(v), "expected an http(s) URL");

/** Accept a provider base URL with or without a trailing `/v1`; keep the root. */
function providerRoot(url: string): string {
  return url.replace(/\/+$/, "").replace(/\/v1$/, "");
}

const ConfigSchema = z.object({
  host: z.string().min(1).default("127.0.0.1"),
  port: z.coerce.number().int("expected an integer port").min(0).max(65535).default(7422),
  home: z.string().min(1).default(join(homedir(), ".switchyard")),
  token: z.preprocess(emptyToUndefined, z.string().min(16, "must be at least 16 characters").optional()),
  /**
   * The cluster's secret (32+ characters): agent tokens and sealed account credentials are keyed
   * from it instead of files in the data dir, so servers sharing a database accept each other's
   * agent tokens and open each other's accounts.
   */
  secretKey: z.preprocess(emptyToUndefined, z.string().min(32, "must be at least 32 characters (e.g. openssl rand -base64 48)").optional()),
  /**
   * PostgreSQL for every domain instead of the SQLite file in the data dir: several servers on
   * one database (docs/SCALING.md). Needs SWITCHYARD_SECRET_KEY.
   */
  databaseUrl: z.preprocess(
    emptyToUndefined,
    z
      .string()
      .regex(/^postgres(ql)?:\/\//, "must be a postgres:// URL (postgres://user:password@host:5432/database)")
      .optional(),
  ),
  allowedHosts: z.preprocess(
    (v) => (typeof v === "string" ? v.split(",").map((s) => s.trim()).filter(Boolean) : v),
    z.array(z.string().min(1)).default([]),
  ),
  allowedRoots: z.preprocess(
    (v) => (typeof v === "string" ? v.split(":").map((s) => s.trim()).filter(Boolean) : v),
    z.array(z.string().min(1)).default([]),
  ),
  logLevel: z.enum(LOG_LEVELS, { error: `expected one of ${LOG_LEVELS.join(", ")}` }).default("info"),
  anthropicApiKey: z.preprocess(emptyToUndefined, z.string().optional()),
  anthropicBaseUrl: z.preprocess(emptyToUndefined, httpUrl.transform(providerRoot).optional()),
  openaiApiKey: z.preprocess(emptyToUndefined, z.string().optional()),
  openaiBaseUrl: z.preprocess(emptyToUndefined, httpUrl.transform(providerRoot).optional()),
  /** A CLI still alive this long after its result (or signal.json) is finished by the watchdog. */
  agentResultGraceMs: z.coerce.number().int().min(100).default(60_000),
  /** An agent with no output for this long is stopped as crashed. */
  agentSilenceMs: z.coerce.number().int().min(1000).default(30 * 60_000),
  /** How deep agents may spawn agents: an agent spawned by a human, a script or a strategy is depth 0. */
  agentMaxDepth: z.coerce.number().int().min(0).max(10).default(2),
  /** How many children one agent may spawn. */
  agentMaxChildren: z.coerce.number().int().min(0).max(1000).default(5),
  /** Per-provider executables, "claude=/opt/claude,codex=/usr/bin/codex" (default: node_modules/.bin, then PATH). */
  agentCommands: z.preprocess(
    (v) =>
      typeof v === "string"
        ? Object.fromEntries(
            v.split(",").map((s) => s.trim()).filter(Boolean).map((pair) => {
              const i = pair.indexOf("=");
              return i > 0 ? [pair.slice(0, i).trim(), pair.slice(i + 1).trim()] : [pair, ""];
            }),
          )
        : v,
    z.record(z.string(), z.string().min(1, "expected provider=/path/to/command")).default({}),
  ),
  /** An account at a usage limit that announced no reset time is skipped this long. */
  accountCooldownMs: z.coerce.number().int().min(1000).default(5 * 60_000),
  /** Where Claude OAuth accounts renew their access token (refresh-token grant). */
  claudeOAuthTokenUrl: httpUrl.default("https://console.anthropic.com/v1/oauth/token"),
  claudeOAuthClientId: z.string().min(1).default("9d1c250a-e61b-44d9-88ed-5944d1962f5e"),
  /** Model prices for run budgets (USD per million tokens), merged over the defaults: {"anthropic/claude-sonnet-4*": {"input": 3, "output": 15}}. */
  modelPrices: z.preprocess(
    (v) => {
      if (typeof v !== "string") return v;
      try {
        return JSON.parse(v) as unknown;
      } catch {
        return v;
      }
    },
    z.record(z.string(), z.object({ input: z.number().nonnegative(), output: z.number().nonnegative() }).strict(), { error: 'expected a JSON map {"provider/model": {"input": USD per 1M, "output": USD per 1M}}' }).default({}),
  ),
  /** Agent worktrees when an agent goes idle: "auto" removes clean ones, "debug" archives them, "off" keeps all. */
  agentCleanup: z.enum(["auto", "debug", "off"]).default("auto"),
  /** An agent that finishes with uncommitted work (after its one commit request): "on" commits it for the agent, "off" keeps it uncommitted with a warning. */
  agentAutocommit: z.enum(["on", "off"]).default("on"),
  /** "normal": survives a crash or kill -9 of the process; "full": also an OS crash (fsync). */
  durability: z.enum(["normal", "full"]).default("normal"),
  /** run_command of strategy agents: "auto" runs what the deny-list lets through without asking; "ask" asks a human for every command. */
  runCommand: z.enum(["auto", "ask"], { error: 'expected "auto" or "ask"' }).default("auto"),
  /** Retention (all three unset: off, nothing is deleted): events and agent output older than this many days are pruned hourly. */
  retentionDays: z.preprocess(emptyToUndefined, z.coerce.number({ error: "expected a number of days, e.g. 30" }).positive("expected a number of days above 0, e.g. 30").optional()),
  /** Retention: the newest this many events are kept, older ones pruned hourly. */
  retentionMaxEvents: z.preprocess(emptyToUndefined, z.coerce.number({ error: "expected a whole number of events, e.g. 1000000" }).int("expected a whole number of events, e.g. 1000000").min(1, "expected at least 1 event").optional()),
  /** Retention: agent output beyond the newest this many megabytes is pruned hourly (whole agents, oldest first). */
  retentionMaxOutputMb: z.preprocess(emptyToUndefined, z.coerce.number({ error: "expected a number of megabytes, e.g. 2048" }).positive("expected a number of megabytes above 0, e.g. 2048").optional()),
});

export type Config = z.infer<typeof ConfigSchema> & {
  /** Directory of the built dashboard. */
  webDir: string;
  /** Directory of the drizzle migrations. */
  migrationsDir: string;
  dbPath: string;
  /** Where the values came from, for error messages. */
  configFile?: string;
};

/** The env var behind each config key: the name a user sees in errors and in the README. */
export const ENV_VARS = {
  host: "SWITCHYARD_HOST",
  port: "SWITCHYARD_PORT",
  home: "SWITCHYARD_HOME",
  token: "SWITCHYARD_TOKEN",
  secretKey: "SWITCHYARD_SECRET_KEY",
  databaseUrl: "SWITCHYARD_DATABASE_URL",
  allowedHosts: "SWITCHYARD_ALLOWED_HOSTS",
  allowedRoots: "SWITCHYARD_ALLOWED_ROOTS",
  logLevel: "SWITCHYARD_LOG_LEVEL",
  anthropicApiKey: "ANTHROPIC_API_KEY",
  anthropicBaseUrl: "ANTHROPIC_BASE_URL",
  openaiApiKey: "OPENAI_API_KEY",
  openaiBaseUrl: "OPENAI_BASE_URL",
  durability: "SWITCHYARD_DURABILITY",
  agentResultGraceMs: "SWITCHYARD_AGENT_RESULT_GRACE_MS",
  agentSilenceMs: "SWITCHYARD_AGENT_SILENCE_MS",
  agentMaxDepth: "SWITCHYARD_AGENT_MAX_DEPTH",
  agentMaxChildren: "SWITCHYARD_AGENT_MAX_CHILDREN",
  agentCommands: "SWITCHYARD_AGENT_COMMANDS",
  accountCooldownMs: "SWITCHYARD_ACCOUNT_COOLDOWN_MS",
  claudeOAuthTokenUrl: "SWITCHYARD_CLAUDE_OAUTH_TOKEN_URL",
  claudeOAuthClientId: "SWITCHYARD_CLAUDE_OAUTH_CLIENT_ID",
  agentCleanup: "SWITCHYARD_AGENT_CLEANUP",
  agentAutocommit: "SWITCHYARD_AGENT_AUTOCOMMIT",
  modelPrices: "SWITCHYARD_MODEL_PRICES",
  runCommand: "SWITCHYARD_RUN_COMMAND",
  retentionDays: "SWITCHYARD_RETENTION_DAYS",
  retentionMaxEvents: "SWITCHYARD_RETENTION_MAX_EVENTS",
  retentionMaxOutputMb: "SWITCHYARD_RETENTION_MAX_OUTPUT_MB",
} as const satisfies Record<keyof z.infer<typeof ConfigSchema>, string>;

export class ConfigError extends Error {
  readonly code = "CONFIG_INVALID";
  constructor(message: string) {
    super(message);
    this.name = "ConfigError";
  }
}

const repoRoot = REPO_ROOT;

/** Read config from an env map (default process.env); throws ConfigError naming the variable. */
export function loadConfig(env: Record<string, string | undefined> = process.env, overrides: Partial<Record<keyof typeof ENV_VARS, unknown>> = {}): Config {
  const configFile = env.SWITCHYARD_CONFIG ? resolve(env.SWITCHYARD_CONFIG) : undefined;
  const fileValues = configFile ? readConfigFile(configFile) : {};
  const raw: Record<string, unknown> = { ...fileValues };
  for (const [key, name] of Object.entries(ENV_VARS)) {
    const value = env[name];
    if (value !== undefined) raw[key] = value;
  }
  Object.assign(raw, Object.fromEntries(Object.entries(overrides).filter(([, v]) => v !== undefined)));
  const parsed = ConfigSchema.safeParse(raw);
  if (!parsed.success) {
    const lines = parsed.error.issues.map((issue) => {
      const key = String(issue.path[0] ?? "");
      const name = ENV_VARS[key as keyof typeof ENV_VARS] ?? key;
      const source = key in fileValues && env[name] === undefined ? ` (in ${configFile})` : "";
      return `${name}${source}: ${issue.message}`;
    });
    throw new ConfigError(`Invalid configuration:\n  ${lines.join("\n  ")}`);
  }
  if (parsed.data.databaseUrl && !parsed.data.secretKey) {
    throw new ConfigError(
      "Invalid configuration:\n  SWITCHYARD_SECRET_KEY: required with SWITCHYARD_DATABASE_URL (every server on the database signs agent tokens and seals account credentials with it; e.g. openssl rand -base64 48, the same value on every server)",
    );
  }
  const home = resolve(parsed.data.home);
  return {
    ...parsed.data,
    home,
    allowedRoots: parsed.data.allowedRoots.map((r) => (isAbsolute(r) ? r : resolve(r))),
    webDir: env.SWITCHYARD_WEB_DIR ? resolve(env.SWITCHYARD_WEB_DIR) : join(repoRoot, "dist", "web"),
    migrationsDir: join(repoRoot, "drizzle"),
    dbPath: join(home, "switchyard.db"),
    configFile,
  };
}

const FILE_KEYS = new Set(Object.keys(ENV_VARS));

function readConfigFile(path: string): Record<string, unknown> {
  if (!existsSync(path)) throw new ConfigError(`SWITCHYARD_CONFIG: file not found: ${path}`);
  let data: unknown;
  try {
    data = JSON.parse(readFileSync(path, "utf8"));
  } catch (err) {
    throw new ConfigError(`SWITCHYARD_CONFIG: ${path} is not valid JSON: ${(err as Error).message}`);
  }
  if (typeof data !== "object" || data === null || Array.isArray(data)) {
    throw new ConfigError(`SWITCHYARD_CONFIG: ${path} must hold a JSON object`);
  }
  const unknown = Object.keys(data).filter((k) => !FILE_KEYS.has(k));
  if (unknown.length > 0) {
    throw new ConfigError(`SWITCHYARD_CONFIG: ${path} has unknown keys: ${unknown.join(", ")} (expected ${[...FILE_KEYS].join(", ")})`);
  }
  return data as Record<string, unknown>;
}

const LOOPBACK = new Set(["127.0.0.1", "localhost", "::1", "[::1]"]);

export function isLoopbackHost(host: string): boolean {
  return LOOPBACK.has(host) || /^127(\.\d{1,3}){3}$/.test(host);
}

/** Secrets that must never appear in logs, events, errors or /health. */
export function secretsOf(config: Config): string[] {
  return [config.token, config.secretKey, config.anthropicApiKey, config.openaiApiKey, config.databaseUrl, databasePassword(config.databaseUrl)].filter(
    (s): s is string => !!s && s.length >= 4,
  );
}

/** The password inside a database URL, as it appears in error messages (decoded). */
function databasePassword(url: string | undefined): string | undefined {
  if (!url) return undefined;
  try {
    const password = new URL(url).password;
    return password ? decodeURIComponent(password) : undefined;
  } catch {
    return undefined;
  }
}
