import { index, integer, sqliteTable, text, uniqueIndex } from "drizzle-orm/sqlite-core";

/**
 * Provider accounts. `secret` and `refreshToken` are sealed (AES-256-GCM, key in the data dir):
 * a copied database file alone does not reveal them.
 */
export const accounts = sqliteTable(
  "accounts",
  {
    id: text("id").primaryKey(),
    /** An agent provider whose adapter supports accounts (checked against the registry on add). */
    provider: text("provider").notNull(),
    label: text("label").notNull(),
    email: text("email"),
    kind: text("kind", { enum: ["api-key", "setup-token", "oauth"] }).notNull(),
    secret: text("secret").notNull(),
    refreshToken: text("refresh_token"),
    secretHint: text("secret_hint").notNull(),
    /** OAuth access-token expiry (epoch ms). */
    expiresAt: integer("expires_at"),
    /** The account's own CLI config dir (CLAUDE_CONFIG_DIR / CODEX_HOME). */
    configDir: text("config_dir").notNull(),
    invalidReason: text("invalid_reason"),
    exhaustedUntil: integer("exhausted_until"),
    exhaustedReason: text("exhausted_reason"),
    lastUsedAt: integer("last_used_at"),
    createdAt: integer("created_at").notNull(),
    updatedAt: integer("updated_at").notNull(),
  },
  (t) => [uniqueIndex("accounts_label_idx").on(t.label), index("accounts_provider_idx").on(t.provider, t.lastUsedAt)],
);
