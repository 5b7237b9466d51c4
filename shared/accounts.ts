import { z } from "zod";

/**
 * Provider accounts for CLI agents (seed 004, Account Failover): credentials are stored encrypted
 * and never leave the server through the API; an account that hits a usage limit is exhausted
 * until its reset time and agents move on to the next one.
 */

export const AccountKind = z.enum(["api-key", "setup-token", "oauth"]);
export type AccountKind = z.infer<typeof AccountKind>;

/**
 * An agent provider whose adapter supports accounts (server/agents/providers: `accounts`), which
 * also says the credential kinds it takes; checked by the server against its registry.
 */
export const AccountProvider = z.string().min(1, "a provider name");
export type AccountProvider = z.infer<typeof AccountProvider>;

export const AccountStatus = z.enum(["available", "exhausted", "invalid"]);
export type AccountStatus = z.infer<typeof AccountStatus>;

/** An account as the API shows it: never the secret, only a hint of it. */
export const AccountInfo = z.object({
  id: z.string(),
  provider: AccountProvider,
  label: z.string(),
  email: z.string().nullable(),
  kind: AccountKind,
  /** The last 4 characters of the secret, to tell keys apart. */
  secretHint: z.string(),
  status: AccountStatus,
  /** Why it is invalid or exhausted. */
  statusReason: z.string().nullable(),
  exhaustedUntil: z.string().nullable(),
  /** OAuth access token expiry, when known. */
  expiresAt: z.string().nullable(),
  lastUsedAt: z.string().nullable(),
  createdAt: z.string(),
  /** Agents currently running on it. */
  activeAgents: z.number().int(),
});
export type AccountInfo = z.infer<typeof AccountInfo>;

const label = z.string().regex(/^[A-Za-z0-9][A-Za-z0-9._@-]{0,63}$/, "letters, digits, . _ @ -, at most 64");

export const AddAccountInput = z
  .object({
    provider: AccountProvider,
    /** A name to pick it by; default the email, else `<provider>-<n>`. */
    label: label.optional(),
    email: z.string().email().optional(),
    kind: AccountKind.default("api-key"),
    /** The API key (api-key) or the token (setup-token: `claude setup-token`; oauth: the access token). */
    secret: z.string().min(8, "at least 8 characters").max(4096),
    /** oauth only: lets the access token be renewed before it expires. */
    refreshToken: z.string().min(8).max(4096).optional(),
    /** oauth only: when the access token expires (ISO time or epoch milliseconds). */
    expiresAt: z.union([z.string().datetime(), z.number().int().positive()]).optional(),
  })
  .strict()
  .superRefine((v, ctx) => {
    if (v.kind !== "oauth" && (v.refreshToken || v.expiresAt)) ctx.addIssue({ code: "custom", path: ["kind"], message: "refreshToken and expiresAt are for oauth accounts" });
  });
export type AddAccountInput = z.input<typeof AddAccountInput>;
