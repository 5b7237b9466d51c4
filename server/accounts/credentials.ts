import { mkdir, readFile, rename, writeFile } from "node:fs/promises";
import { join } from "node:path";
import type { AccountKind, AccountProvider } from "../../shared/accounts";

/**
 * How an account's credentials reach a CLI: files in the account's own config dir
 * (CLAUDE_CONFIG_DIR / CODEX_HOME) and variables set or removed in the agent's environment.
 */

export interface Credentials {
  provider: AccountProvider;
  kind: AccountKind;
  secret: string;
  refreshToken: string | null;
  /** Access-token expiry (epoch ms), oauth only. */
  expiresAt: number | null;
  email: string | null;
}

export interface Materialized {
  env: Record<string, string>;
  /** Variables of the server's environment the agent must not inherit (they would win). */
  unset: string[];
}

/** Every way a Claude Code process could pick up credentials other than the account's. */
const CLAUDE_AUTH_VARS = ["ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN", "CLAUDE_CODE_OAUTH_TOKEN"];

async function writeAtomic(path: string, body: string): Promise<void> {
  const tmp = `${path}.${process.pid}.tmp`;
  await writeFile(tmp, body, { mode: 0o600 });
  await rename(tmp, path);
}

async function readJson(path: string): Promise<Record<string, unknown> | null> {
  try {
    const v = JSON.parse(await readFile(path, "utf8")) as unknown;
    return v !== null && typeof v === "object" && !Array.isArray(v) ? (v as Record<string, unknown>) : null;
  } catch {
    return null;
  }
}

/** `.claude.json`: onboarding marked complete (kept fields: whatever the CLI wrote itself). */
async function markOnboarded(configDir: string, email: string | null): Promise<void> {
  const path = join(configDir, ".claude.json");
  const current = (await readJson(path)) ?? {};
  if (current.hasCompletedOnboarding === true && (!email || current.oauthAccount)) return;
  const next: Record<string, unknown> = { ...current, hasCompletedOnboarding: true };
  if (email && !current.oauthAccount) next.oauthAccount = { emailAddress: email };
  await writeAtomic(path, JSON.stringify(next, null, 2));
}

/** The `.credentials.json` Claude Code reads from its config dir on Linux. */
export function claudeCredentialsFile(c: Credentials): { claudeAiOauth: Record<string, unknown> } {
  if (c.kind === "setup-token") return { claudeAiOauth: { accessToken: c.secret } };
  return { claudeAiOauth: { accessToken: c.secret, refreshToken: c.refreshToken, expiresAt: c.expiresAt, scopes: ["user:inference", "user:profile"] } };
}

export async function materialize(configDir: string, c: Credentials): Promise<Materialized> {
  await mkdir(configDir, { recursive: true, mode: 0o700 });
  if (c.provider === "codex") return { env: { OPENAI_API_KEY: c.secret }, unset: [] };
  await markOnboarded(configDir, c.email);
  if (c.kind === "api-key") return { env: { ANTHROPIC_API_KEY: c.secret }, unset: CLAUDE_AUTH_VARS.filter((v) => v !== "ANTHROPIC_API_KEY") };
  await writeAtomic(join(configDir, ".credentials.json"), JSON.stringify(claudeCredentialsFile(c), null, 2));
  // a setup token is also what CLAUDE_CODE_OAUTH_TOKEN is for; an oauth login lives in the file only
  // (the CLI refreshes it there, and we read the rotated tokens back before the next spawn)
  const env: Record<string, string> = c.kind === "setup-token" ? { CLAUDE_CODE_OAUTH_TOKEN: c.secret } : {};
  return { env, unset: CLAUDE_AUTH_VARS.filter((v) => !(v in env)) };
}

/** Tokens the CLI itself rotated in its config dir since we wrote them (newer expiry), if any. */
export async function rotatedClaudeTokens(configDir: string, known: { expiresAt: number | null }): Promise<{ accessToken: string; refreshToken: string | null; expiresAt: number } | null> {
  const file = await readJson(join(configDir, ".credentials.json"));
  const oauth = file?.claudeAiOauth as Record<string, unknown> | undefined;
  if (!oauth || typeof oauth.accessToken !== "string" || typeof oauth.expiresAt !== "number") return null;
  if (known.expiresAt !== null && oauth.expiresAt <= known.expiresAt) return null;
  return { accessToken: oauth.accessToken, refreshToken: typeof oauth.refreshToken === "string" ? oauth.refreshToken : null, expiresAt: oauth.expiresAt };
}

export interface OAuthEndpoint {
  tokenUrl: string;
  clientId: string;
}

/** A refresh-token grant (RFC 6749 section 6), JSON as Claude's OAuth server takes it. */
export async function refreshOAuth(endpoint: OAuthEndpoint, refreshToken: string, signal?: AbortSignal): Promise<{ accessToken: string; refreshToken: string; expiresAt: number }> {
  const res = await fetch(endpoint.tokenUrl, {
    method: "POST",
    headers: { "content-type": "application/json", accept: "application/json" },
    body: JSON.stringify({ grant_type: "refresh_token", refresh_token: refreshToken, client_id: endpoint.clientId }),
    signal: signal ?? AbortSignal.timeout(20_000),
  });
  const body = (await res.json().catch(() => null)) as Record<string, unknown> | null;
  if (!res.ok || !body || typeof body.access_token !== "string") {
    const detail = body && typeof body.error === "string" ? `${body.error}${typeof body.error_description === "string" ? `: ${body.error_description}` : ""}` : `HTTP ${res.status}`;
    throw Object.assign(new Error(`the OAuth refresh was refused (${detail})`), { status: res.status });
  }
  const expiresIn = typeof body.expires_in === "number" ? body.expires_in : 3600;
  return { accessToken: body.access_token, refreshToken: typeof body.refresh_token === "string" ? body.refresh_token : refreshToken, expiresAt: Date.now() + expiresIn * 1000 };
}
