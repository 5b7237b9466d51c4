import { createCipheriv, createDecipheriv, randomBytes } from "node:crypto";
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { deriveKey } from "../keys";

/**
 * Credentials at rest: AES-256-GCM. The key comes from SWITCHYARD_SECRET_KEY when it is set (the
 * same on every server of a cluster; sealed values `k1.<iv>.<tag>.<ciphertext>`), else from a key
 * generated once into `<home>/account-key` (0600; `v1.…`). Values sealed with the data dir's key
 * before SWITCHYARD_SECRET_KEY was set still open where that file is. Tampering fails the open.
 */
export class Sealer {
  private readonly fileKey: Buffer | undefined;
  private readonly clusterKey: Buffer | undefined;
  private readonly keyPath: string;

  constructor(home: string, secretKey?: string) {
    this.keyPath = join(home, "account-key");
    if (secretKey) this.clusterKey = deriveKey(secretKey, "account-sealing");
    if (existsSync(this.keyPath)) {
      this.fileKey = Buffer.from(readFileSync(this.keyPath, "utf8").trim(), "base64url");
      if (this.fileKey.length !== 32) throw new Error(`${this.keyPath} is not a 32-byte key: restore it from a backup or remove every account`);
    } else if (!secretKey) {
      mkdirSync(home, { recursive: true });
      this.fileKey = randomBytes(32);
      writeFileSync(this.keyPath, this.fileKey.toString("base64url"), { mode: 0o600, flag: "wx" });
    }
  }

  seal(plain: string): string {
    const [version, key] = this.clusterKey ? (["k1", this.clusterKey] as const) : (["v1", this.fileKey!] as const);
    const iv = randomBytes(12);
    const cipher = createCipheriv("aes-256-gcm", key, iv);
    const body = Buffer.concat([cipher.update(plain, "utf8"), cipher.final()]);
    return [version, iv.toString("base64url"), cipher.getAuthTag().toString("base64url"), body.toString("base64url")].join(".");
  }

  open(sealed: string): string {
    const [version, iv, tag, body] = sealed.split(".");
    if ((version !== "v1" && version !== "k1") || !iv || !tag || body === undefined) throw new Error("not a sealed credential");
    const key = version === "k1" ? this.clusterKey : this.fileKey;
    if (!key) {
      throw new Error(
        version === "k1"
          ? "this credential was sealed with SWITCHYARD_SECRET_KEY: set the same SWITCHYARD_SECRET_KEY as the server that added it"
          : `this credential was sealed with the account key of the data dir that added it (${this.keyPath} is missing here): copy that file here, or add the account again`,
      );
    }
    const decipher = createDecipheriv("aes-256-gcm", key, Buffer.from(iv, "base64url"));
    decipher.setAuthTag(Buffer.from(tag, "base64url"));
    return Buffer.concat([decipher.update(Buffer.from(body, "base64url")), decipher.final()]).toString("utf8");
  }
}
