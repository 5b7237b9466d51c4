import { z } from "zod";

/** Account lifecycle (no scope: accounts are global). Payloads never carry a secret. */
export const AccountEvents = {
  "account.added": z.object({ accountId: z.string(), provider: z.string(), label: z.string() }),
  "account.removed": z.object({ accountId: z.string(), label: z.string() }),
  /** A usage limit: the account is skipped until `until`. */
  "account.exhausted": z.object({ accountId: z.string(), label: z.string(), until: z.string(), reason: z.string().max(2000) }),
  "account.became_available": z.object({ accountId: z.string(), label: z.string() }),
  "account.invalidated": z.object({ accountId: z.string(), label: z.string(), reason: z.string().max(2000) }),
} as const;
