import { createHash, randomBytes, timingSafeEqual } from "node:crypto";

/** Worker tokens read `syw.<name>.<secret>`: the name says which row to check, the secret is never stored. */
const PREFIX = "syw";

export function mintWorkerToken(name: string): { token: string; hash: string } {
  const token = `${PREFIX}.${name}.${randomBytes(32).toString("base64url")}`;
  return { token, hash: hashWorkerToken(token) };
}

export function hashWorkerToken(token: string): string {
  return createHash("sha256").update(token).digest("hex");
}

/** The worker a token claims to be (not yet checked), or null when it is not a worker token. */
export function claimedWorker(token: string): string | null {
  const parts = token.split(".");
  if (parts.length !== 3 || parts[0] !== PREFIX || !parts[1] || !parts[2]) return null;
  return parts[1];
}

/** Whether `token` hashes to `hash`, in constant time. */
export function tokenMatches(token: string, hash: string): boolean {
  const a = Buffer.from(hashWorkerToken(token), "hex");
  const b = Buffer.from(hash, "hex");
  return a.length === b.length && timingSafeEqual(a, b);
}
