import { hkdfSync } from "node:crypto";

/** What a key derived from SWITCHYARD_SECRET_KEY is for: one purpose, one key. */
export type KeyPurpose = "agent-tokens" | "account-sealing";

/**
 * A 32-byte key for one purpose from the cluster's secret (HKDF-SHA256): servers sharing
 * SWITCHYARD_SECRET_KEY derive the same keys, and a key of one purpose says nothing of another.
 */
export function deriveKey(secretKey: string, purpose: KeyPurpose): Buffer {
  return Buffer.from(hkdfSync("sha256", secretKey, "switchyard", `switchyard ${purpose} v1`, 32));
}
