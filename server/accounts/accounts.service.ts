import { rmSync } from "node:fs";
import { join } from "node:path";
import { eq } from "drizzle-orm";
import { AddAccountInput, type AccountInfo, type AccountProvider } from "../../shared/accounts";
import type { EventPayload, EventType } from "../../shared/events";
import { uuidv7 } from "../daemons/uuidv7";
import type { Db } from "../db/client";
import { DomainError } from "../errors";
import type { EventBus } from "../events/bus";
import type { Logger } from "../log";
import { accounts } from "./accounts.sql";
import { accountProviders, accountSupportOf } from "../agents/providers";
import { materialize, refreshOAuth, rotatedTokens, type Credentials, type Materialized, type OAuthEndpoint } from "./credentials";
import { Sealer } from "./sealing";

export type AccountRow = typeof accounts.$inferSelect;

/** An account picked for a process run: where its CLI config lives and what the env gets. */
export interface AcquiredAccount extends Materialized {
  id: string;
  label: string;
  configDir: string;
}

export interface AccountsServiceOptions {
  db: Db;
  bus: EventBus;
  log: Logger;
  home: string;
  /** SWITCHYARD_SECRET_KEY: credentials sealed with a key every server of a cluster shares. */
  secretKey?: string;
  cooldownMs: number;
  claudeOAuth: OAuthEndpoint;
  /** Every secret becomes a redaction target of logs and errors. */
  addSecret(secret: string): void;
  /** How many live agents use an account (for the list and for a safe remove). */
  activeAgentsOf(accountId: string): number;
}

/** A token this close to its expiry is renewed before a spawn. */
const REFRESH_MARGIN_MS = 5 * 60_000;

/**
 * Provider accounts: stored sealed, each with its own CLI config dir; least-recently-used
 * selection among those neither exhausted nor invalid; a usage limit exhausts an account until
 * its reset time, and listeners hear when one frees up again.
 */
export class AccountsService {
  private readonly sealer: Sealer;
  private timer: NodeJS.Timeout | undefined;
  private readonly listeners = new Set<(provider: AccountProvider) => void>();
  /** One refresh at a time per account. */
  private readonly refreshing = new Map<string, Promise<void>>();

  constructor(private readonly opts: AccountsServiceOptions) {
    this.sealer = new Sealer(opts.home, opts.secretKey);
    for (const row of this.rows()) {
      try {
        opts.addSecret(this.sealer.open(row.secret));
        if (row.refreshToken) opts.addSecret(this.sealer.open(row.refreshToken));
      } catch {
        // a key that does not open it: reported when the account is used
      }
    }
    this.schedule();
  }

  private rows(): AccountRow[] {
    return this.opts.db.select().from(accounts).all();
  }

  private row(idOrLabel: string): AccountRow {
    const row = this.rows().find((r) => r.id === idOrLabel || r.label === idOrLabel);
    if (!row) throw new DomainError("ACCOUNT_NOT_FOUND", `No account "${idOrLabel}" (see yard account list)`, { kind: "NOT_FOUND" });
    return row;
  }

  private update(id: string, patch: Partial<AccountRow>): void {
    this.opts.db.update(accounts).set({ ...patch, updatedAt: Date.now() }).where(eq(accounts.id, id)).run();
  }

  private info(row: AccountRow, now = Date.now()): AccountInfo {
    const exhausted = row.exhaustedUntil !== null && row.exhaustedUntil > now;
    const iso = (ms: number | null) => (ms === null ? null : new Date(ms).toISOString());
    return {
      id: row.id,
      provider: row.provider,
      label: row.label,
      email: row.email,
      kind: row.kind,
      secretHint: row.secretHint,
      status: row.invalidReason ? "invalid" : exhausted ? "exhausted" : "available",
      statusReason: row.invalidReason ?? (exhausted ? row.exhaustedReason : null),
      exhaustedUntil: exhausted ? iso(row.exhaustedUntil) : null,
      expiresAt: iso(row.expiresAt),
      lastUsedAt: iso(row.lastUsedAt),
      createdAt: new Date(row.createdAt).toISOString(),
      activeAgents: this.opts.activeAgentsOf(row.id),
    };
  }

  list(filter: { provider?: AccountProvider } = {}): AccountInfo[] {
    const now = Date.now();
    return this.rows()
      .filter((r) => !filter.provider || r.provider === filter.provider)
      .sort((a, b) => a.createdAt - b.createdAt)
      .map((r) => this.info(r, now));
  }

  get(idOrLabel: string): AccountInfo {
    return this.info(this.row(idOrLabel));
  }

  /** Whether agents of this provider run on registered accounts (else on the server's own env). */
  has(provider: string): boolean {
    return this.rows().some((r) => r.provider === provider);
  }

  async add(raw: AddAccountInput): Promise<AccountInfo> {
    const input = AddAccountInput.parse(raw);
    checkSupported(input.provider, input.kind);
    const existing = this.rows();
    const label = input.label ?? input.email ?? nextLabel(input.provider, existing);
    if (existing.some((r) => r.label === label)) throw new DomainError("ACCOUNT_EXISTS", `An account labelled "${label}" exists: pick another --label`, { kind: "CONFLICT" });
    const secrets = existing.map((r) => this.tryOpen(r.secret));
    if (secrets.includes(input.secret)) throw new DomainError("ACCOUNT_EXISTS", "That credential is already registered under another label", { kind: "CONFLICT" });
    const id = `acct_${uuidv7()}`;
    const now = Date.now();
    const expiresAt = input.expiresAt === undefined ? null : typeof input.expiresAt === "number" ? input.expiresAt : Date.parse(input.expiresAt);
    this.opts.addSecret(input.secret);
    if (input.refreshToken) this.opts.addSecret(input.refreshToken);
    this.opts.db
      .insert(accounts)
      .values({
        id,
        provider: input.provider,
        label,
        email: input.email ?? null,
        kind: input.kind,
        secret: this.sealer.seal(input.secret),
        refreshToken: input.refreshToken ? this.sealer.seal(input.refreshToken) : null,
        secretHint: `…${input.secret.slice(-4)}`,
        expiresAt,
        configDir: join(this.opts.home, "accounts", id),
        createdAt: now,
        updatedAt: now,
      })
      .run();
    await this.publish("account.added", { accountId: id, provider: input.provider, label });
    this.notify(input.provider);
    return this.get(id);
  }

  async remove(idOrLabel: string, opts: { force?: boolean } = {}): Promise<void> {
    const row = this.row(idOrLabel);
    const active = this.opts.activeAgentsOf(row.id);
    if (active > 0 && !opts.force) throw new DomainError("ACCOUNT_IN_USE", `${active} running agent(s) use "${row.label}": stop them first, or remove with force`, { kind: "CONFLICT" });
    this.opts.db.delete(accounts).where(eq(accounts.id, row.id)).run();
    rmSync(row.configDir, { recursive: true, force: true });
    await this.publish("account.removed", { accountId: row.id, label: row.label });
  }

  /** Make an exhausted or invalid account selectable again now (a human knows better). */
  async reset(idOrLabel: string): Promise<AccountInfo> {
    const row = this.row(idOrLabel);
    this.update(row.id, { exhaustedUntil: null, exhaustedReason: null, invalidReason: null });
    await this.publish("account.available", { accountId: row.id, label: row.label });
    this.notify(row.provider);
    return this.get(row.id);
  }

  /**
   * The account for the next process run: `prefer` when it is usable, else the least recently
   * used usable one; its credentials refreshed when due and written into its config dir. Null
   * when every account of the provider is exhausted or invalid.
   */
  async acquire(provider: string, opts: { prefer?: string | null } = {}): Promise<AcquiredAccount | null> {
    for (;;) {
      const now = Date.now();
      const usable = this.rows()
        .filter((r) => r.provider === provider && !r.invalidReason && (r.exhaustedUntil === null || r.exhaustedUntil <= now))
        .sort((a, b) => (a.lastUsedAt ?? 0) - (b.lastUsedAt ?? 0) || a.createdAt - b.createdAt);
      const row = usable.find((r) => r.id === opts.prefer || r.label === opts.prefer) ?? usable[0];
      if (!row) return null;
      try {
        const creds = await this.credentials(row);
        const m = await materialize(row.configDir, creds);
        this.update(row.id, { lastUsedAt: now });
        return { id: row.id, label: row.label, configDir: row.configDir, ...m };
      } catch (err) {
        await this.markInvalid(row, err instanceof Error ? err.message : String(err));
      }
    }
  }

  private tryOpen(sealed: string): string | null {
    try {
      return this.sealer.open(sealed);
    } catch {
      return null;
    }
  }

  /** The account's current credentials: rotated by the CLI, or refreshed here when close to expiry. */
  private async credentials(row: AccountRow): Promise<Credentials> {
    const secret = this.tryOpen(row.secret);
    if (secret === null) throw new Error("its credential cannot be decrypted with this data dir's account-key: add the account again");
    let creds: Credentials = {
      provider: row.provider,
      kind: row.kind,
      secret,
      refreshToken: row.refreshToken ? this.tryOpen(row.refreshToken) : null,
      expiresAt: row.expiresAt,
      email: row.email,
    };
    if (row.kind !== "oauth") return creds;
    const rotated = await rotatedTokens(row.provider, row.configDir, { expiresAt: row.expiresAt });
    if (rotated) {
      creds = { ...creds, secret: rotated.accessToken, refreshToken: rotated.refreshToken ?? creds.refreshToken, expiresAt: rotated.expiresAt };
      this.store(row.id, creds);
    }
    if (creds.expiresAt === null || creds.expiresAt - Date.now() > REFRESH_MARGIN_MS) return creds;
    if (!creds.refreshToken) {
      throw new Error(`its OAuth token ${creds.expiresAt <= Date.now() ? "expired" : "expires"} at ${new Date(creds.expiresAt).toISOString()} and there is no refresh token: log in again and re-add it`);
    }
    const pending = this.refreshing.get(row.id);
    if (pending) {
      await pending;
      return this.credentials(this.row(row.id));
    }
    const refreshToken = creds.refreshToken;
    const job = refreshOAuth(this.opts.claudeOAuth, refreshToken).then((fresh) => {
      creds = { ...creds, secret: fresh.accessToken, refreshToken: fresh.refreshToken, expiresAt: fresh.expiresAt };
      this.store(row.id, creds);
      this.opts.log.info({ accountId: row.id, label: row.label }, "account OAuth token refreshed");
    });
    this.refreshing.set(row.id, job);
    try {
      await job;
    } finally {
      this.refreshing.delete(row.id);
    }
    return creds;
  }

  private store(id: string, c: Credentials): void {
    this.opts.addSecret(c.secret);
    if (c.refreshToken) this.opts.addSecret(c.refreshToken);
    this.update(id, {
      secret: this.sealer.seal(c.secret),
      refreshToken: c.refreshToken ? this.sealer.seal(c.refreshToken) : null,
      secretHint: `…${c.secret.slice(-4)}`,
      expiresAt: c.expiresAt,
    });
  }

  private async markInvalid(row: AccountRow, reason: string): Promise<void> {
    const text = `Account "${row.label}" cannot be used: ${reason}`;
    this.update(row.id, { invalidReason: text });
    this.opts.log.warn({ accountId: row.id, label: row.label }, text);
    await this.publish("account.invalid", { accountId: row.id, label: row.label, reason: text.slice(0, 2000) });
  }

  /** A usage limit: skipped until `until` (the announced reset, else now + the cooldown). */
  async markExhausted(accountId: string, until: number | null, reason: string): Promise<{ until: number } | null> {
    const row = this.rows().find((r) => r.id === accountId);
    if (!row) return null;
    const at = until !== null && until > Date.now() ? until : Date.now() + this.opts.cooldownMs;
    this.update(row.id, { exhaustedUntil: at, exhaustedReason: reason.slice(0, 2000) });
    await this.publish("account.exhausted", { accountId: row.id, label: row.label, until: new Date(at).toISOString(), reason: reason.slice(0, 2000) });
    this.schedule();
    return { until: at };
  }

  /** The earliest time an exhausted account of the provider frees up, when one will. */
  nextFreeAt(provider: string): number | null {
    const times = this.rows()
      .filter((r) => r.provider === provider && !r.invalidReason && r.exhaustedUntil !== null)
      .map((r) => r.exhaustedUntil as number);
    return times.length > 0 ? Math.min(...times) : null;
  }

  /** How many accounts of the provider could take a run now, leaving out `except`. */
  usableCount(provider: string, except?: string): number {
    const now = Date.now();
    return this.rows().filter((r) => r.provider === provider && r.id !== except && !r.invalidReason && (r.exhaustedUntil === null || r.exhaustedUntil <= now)).length;
  }

  /** Every account's label by id (one read for a whole list of agents). */
  labels(): Map<string, string> {
    return new Map(this.rows().map((r) => [r.id, r.label]));
  }

  label(accountId: string | null): string | null {
    if (!accountId) return null;
    return this.rows().find((r) => r.id === accountId)?.label ?? null;
  }

  /** Called when an account of a provider becomes usable (added, reset, or its limit passed). */
  onAvailable(listener: (provider: AccountProvider) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  private notify(provider: AccountProvider): void {
    for (const l of this.listeners) l(provider);
  }

  /** One timer, at the earliest exhaustion end. */
  private schedule(): void {
    clearTimeout(this.timer);
    const now = Date.now();
    const pending = this.rows().filter((r) => r.exhaustedUntil !== null);
    for (const r of pending.filter((p) => (p.exhaustedUntil as number) <= now)) {
      this.update(r.id, { exhaustedUntil: null, exhaustedReason: null });
      void this.publish("account.available", { accountId: r.id, label: r.label });
      this.notify(r.provider);
    }
    const next = pending.map((r) => r.exhaustedUntil as number).filter((t) => t > now);
    if (next.length === 0) return;
    // setTimeout holds at most ~24.8 days; a later reset is re-checked then
    const delay = Math.min(Math.min(...next) - now + 50, 2 ** 31 - 1);
    this.timer = setTimeout(() => this.schedule(), delay);
    this.timer.unref();
  }

  close(): void {
    clearTimeout(this.timer);
    this.listeners.clear();
  }

  private async publish<T extends EventType>(type: T, payload: EventPayload<T>): Promise<void> {
    try {
      await this.opts.bus.publish(type, payload);
    } catch (err) {
      this.opts.log.warn({ err, type }, "account event not published");
    }
  }
}

/** The provider's adapter says its agents run on accounts, with credentials of this kind. */
function checkSupported(provider: string, kind: AccountRow["kind"]): void {
  const support = accountSupportOf(provider);
  if (!support) {
    throw new DomainError("ACCOUNT_PROVIDER_UNSUPPORTED", `provider: "${provider}" agents cannot run on accounts; expected one of ${accountProviders().join(", ")}`);
  }
  if (!support.kinds.includes(kind)) throw new DomainError("ACCOUNT_KIND_UNSUPPORTED", `kind: ${provider} accounts are ${support.kindsText}, not ${kind}`);
}

function nextLabel(provider: string, rows: AccountRow[]): string {
  for (let n = 1; ; n++) {
    const label = `${provider}-${n}`;
    if (!rows.some((r) => r.label === label)) return label;
  }
}
