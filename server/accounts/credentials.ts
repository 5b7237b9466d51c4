import { mkdir } from "node:fs/promises";
import { accountSupportOf } from "../agents/providers";
import type { AccountCredentials, MaterializedAccount, RotatedTokens } from "../agents/providers/types";

/**
 * How an account's credentials reach a CLI: the provider's adapter (`accounts` in
 * server/agents/providers/<name>.ts) writes them into the account's own config dir (the CLI's
 * CLAUDE_CONFIG_DIR, CODEX_HOME...) and says which variables the agent's environment gets or loses.
 */

export interface Credentials extends AccountCredentials {
  provider: string;
}

export type Materialized = MaterializedAccount;

function supportOf(provider: string) {
  const support = accountSupportOf(provider);
  if (!support) throw new Error(`${provider} agents cannot run on accounts`);
  return support;
}

export async function materialize(configDir: string, c: Credentials): Promise<Materialized> {
  await mkdir(configDir, { recursive: true, mode: 0o700 });
  return supportOf(c.provider).materialize(configDir, c);
}

/** The files of a config dir the CLI rotates its tokens in (empty: it does not). */
export function rotatedFiles(provider: string): string[] {
  return accountSupportOf(provider)?.rotatedFiles ?? [];
}

/** Tokens the CLI itself rotated in the account's config dir since we wrote them (newer expiry), if any. */
export async function rotatedTokens(provider: string, configDir: string, known: { expiresAt: number | null }): Promise<RotatedTokens | null> {
  return (await supportOf(provider).rotatedTokens?.(configDir, known)) ?? null;
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
