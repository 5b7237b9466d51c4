import { createCipheriv, createDecipheriv, randomBytes } from "node:crypto";
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";

/**
 * Credentials at rest: AES-256-GCM with a key generated once into `<home>/account-key` (0600).
 * A sealed value is `v1.<iv>.<tag>.<ciphertext>` (base64url); tampering fails the open.
 */
export class Sealer {
  private readonly key: Buffer;

  constructor(home: string) {
    const path = join(home, "account-key");
    if (existsSync(path)) {
      this.key = Buffer.from(readFileSync(path, "utf8").trim(), "base64url");
      if (this.key.length !== 32) throw new Error(`${path} is not a 32-byte key: restore it from a backup or remove every account`);
    } else {
      mkdirSync(home, { recursive: true });
      this.key = randomBytes(32);
      writeFileSync(path, this.key.toString("base64url"), { mode: 0o600, flag: "wx" });
    }
  }

  seal(plain: string): string {
    const iv = randomBytes(12);
    const cipher = createCipheriv("aes-256-gcm", this.key, iv);
    const body = Buffer.concat([cipher.update(plain, "utf8"), cipher.final()]);
    return ["v1", iv.toString("base64url"), cipher.getAuthTag().toString("base64url"), body.toString("base64url")].join(".");
  }

  open(sealed: string): string {
    const [version, iv, tag, body] = sealed.split(".");
    if (version !== "v1" || !iv || !tag || body === undefined) throw new Error("not a sealed credential");
    const decipher = createDecipheriv("aes-256-gcm", this.key, Buffer.from(iv, "base64url"));
    decipher.setAuthTag(Buffer.from(tag, "base64url"));
    return Buffer.concat([decipher.update(Buffer.from(body, "base64url")), decipher.final()]).toString("utf8");
  }
}
