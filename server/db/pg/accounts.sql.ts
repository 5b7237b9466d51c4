import { bigint, index, pgTable, text, uniqueIndex } from "drizzle-orm/pg-core";

/** Provider accounts, secrets sealed as on SQLite (twin of server/accounts/accounts.sql.ts). */
export const accounts = pgTable(
  "accounts",
  {
    id: text("id").primaryKey(),
    provider: text("provider").notNull(),
    label: text("label").notNull(),
    email: text("email"),
    kind: text("kind", { enum: ["api-key", "setup-token", "oauth"] }).notNull(),
    secret: text("secret").notNull(),
    refreshToken: text("refresh_token"),
    secretHint: text("secret_hint").notNull(),
    expiresAt: bigint("expires_at", { mode: "number" }),
    configDir: text("config_dir").notNull(),
    invalidReason: text("invalid_reason"),
    exhaustedUntil: bigint("exhausted_until", { mode: "number" }),
    exhaustedReason: text("exhausted_reason"),
    lastUsedAt: bigint("last_used_at", { mode: "number" }),
    createdAt: bigint("created_at", { mode: "number" }).notNull(),
    updatedAt: bigint("updated_at", { mode: "number" }).notNull(),
  },
  (t) => [uniqueIndex("accounts_label_idx").on(t.label), index("accounts_provider_idx").on(t.provider, t.lastUsedAt)],
);
