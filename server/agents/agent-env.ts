import { createHmac, randomBytes, timingSafeEqual } from "node:crypto";
import { chmodSync, existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { deriveKey } from "../keys";
import { REPO_ROOT } from "../paths";

/**
 * What every agent process gets in its environment: where the server is, who it is, a token that
 * works only as that agent, a listen file, and `yard` first on its PATH.
 */

const TOKEN_PREFIX = "sya";

/** A secret kept in the data dir (0600), so agent tokens survive restarts (agents outlive us). */
export function loadAgentSecret(home: string): Buffer {
  const path = join(home, "agent-secret");
  if (existsSync(path)) return Buffer.from(readFileSync(path, "utf8").trim(), "base64url");
  mkdirSync(home, { recursive: true });
  const secret = randomBytes(32);
  writeFileSync(path, secret.toString("base64url"), { mode: 0o600 });
  return secret;
}

/**
 * The keys of agent tokens: with SWITCHYARD_SECRET_KEY, new tokens are signed with a key derived
 * from it (every server of a cluster accepts them); tokens of the data dir's own secret, handed to
 * agents before the key was set, stay valid here.
 */
export function agentSecrets(home: string, secretKey: string | undefined): { mint: Buffer; accept: Buffer[] } {
  if (!secretKey) {
    const own = loadAgentSecret(home);
    return { mint: own, accept: [own] };
  }
  const derived = deriveKey(secretKey, "agent-tokens");
  const path = join(home, "agent-secret");
  return { mint: derived, accept: existsSync(path) ? [derived, loadAgentSecret(home)] : [derived] };
}

export function agentToken(secret: Buffer, agentId: string): string {
  const sig = createHmac("sha256", secret).update(`agent:${agentId}`).digest("base64url");
  return `${TOKEN_PREFIX}.${agentId}.${sig}`;
}

/** The agent id a token was issued to (under any of `secrets`), or null when it is not a valid agent token. */
export function verifyAgentToken(secrets: Buffer | readonly Buffer[], token: string): string | null {
  const parts = token.split(".");
  if (parts.length !== 3 || parts[0] !== TOKEN_PREFIX || !parts[1]) return null;
  const given = Buffer.from(token);
  for (const secret of Array.isArray(secrets) ? secrets : [secrets as Buffer]) {
    const expected = Buffer.from(agentToken(secret, parts[1]));
    if (expected.length === given.length && timingSafeEqual(expected, given)) return parts[1];
  }
  return null;
}

/** `<home>/bin/yard`: a shim running this installation's CLI with this Node. */
export function ensureYardShim(home: string): string {
  const dir = join(home, "bin");
  const path = join(dir, "yard");
  const body = `#!/bin/sh\nexec "${process.execPath}" "${join(REPO_ROOT, "bin", "yard.mjs")}" "$@"\n`;
  mkdirSync(dir, { recursive: true });
  if (!existsSync(path) || readFileSync(path, "utf8") !== body) {
    writeFileSync(path, body);
    chmodSync(path, 0o755);
  }
  return dir;
}

export interface AgentEnvInput {
  base: NodeJS.ProcessEnv;
  serverUrl: string;
  agentId: string;
  token: string;
  listenFile: string;
  binDir: string;
  extra: Record<string, string>;
}

/** Variables that must not leak from the server into an agent. */
const DROP = ["SWITCHYARD_CONFIG", "SWITCHYARD_PORT", "SWITCHYARD_HOST", "SWITCHYARD_EXIT_FILE", "NODE_OPTIONS", "VITEST", "VITEST_POOL_ID", "VITEST_WORKER_ID"];

export function agentEnv(input: AgentEnvInput): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { ...input.base };
  for (const key of DROP) delete env[key];
  return {
    ...env,
    ...input.extra,
    PATH: `${input.binDir}:${input.base.PATH ?? "/usr/local/bin:/usr/bin:/bin"}`,
    SWITCHYARD_URL: input.serverUrl,
    SWITCHYARD_AGENT_ID: input.agentId,
    SWITCHYARD_TOKEN: input.token,
    SWITCHYARD_LISTEN_FILE: input.listenFile,
  };
}
