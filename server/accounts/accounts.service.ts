import { rmSync } from "node:fs";
import { mkdir, mkdtemp, readFile, readdir, rm, stat, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { eq, or, type SQL } from "drizzle-orm";
import { AddAccountInput, type AccountInfo, type AccountProvider } from "../../shared/accounts";
import type { EventPayload, EventType } from "../../shared/events";
import { uuidv7 } from "../lib/uuidv7";
import { first, type Store } from "../db/store";
import { DomainError } from "../errors";
import type { EventBus } from "../events/bus";
import type { Logger } from "../log";
import type { accounts } from "./accounts.sql";
import { accountProviders, accountSupportOf } from "../agents/providers";
import { materialize, refreshOAuth, rotatedFiles, rotatedTokens, type Credentials, type Materialized, type OAuthEndpoint } from "./credentials";
import { ExhaustionTimer, type FreedAccount } from "./exhaustion-timer";
import { Sealer } from "./sealing";

export type AccountRow = typeof accounts.$inferSelect;

/** An account picked for a process run: where its CLI config lives and what the env gets. */
export interface AcquiredAccount extends Materialized {
  id: string;
  label: string;
  configDir: string;
}

export interface AccountsServiceOptions {
  store: Store;
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
  activeAgentsOf(accountId: string): number | Promise<number>;
}

/** A token this close to its expiry is renewed before a spawn. */
const REFRESH_MARGIN_MS = 5 * 60_000;

const usableAt = (r: AccountRow, now: number) => !r.invalidReason && (r.exhaustedUntil === null || r.exhaustedUntil <= now);

/**
 * Provider accounts: stored sealed, each with its own CLI config dir; least-recently-used
 * selection among those neither exhausted nor invalid; a usage limit exhausts an account until
 * its reset time, and listeners hear when one frees up again.
 */
export class AccountsService {
  private readonly sealer: Sealer;
  private readonly timer: ExhaustionTimer;
  private readonly listeners = new Set<(provider: AccountProvider) => void>();
  /** One refresh at a time per account. */
  private readonly refreshing = new Map<string, Promise<void>>();
  /** The stored secrets registered for redaction and the first timer set (started by the constructor). */
  private readonly ready: Promise<void>;

  constructor(private readonly opts: AccountsServiceOptions) {
    this.sealer = new Sealer(opts.home, opts.secretKey);
    this.timer = new ExhaustionTimer(opts.store, opts.log, (account) => this.freed(account));
    this.ready = this.load();
  }

  /** Every stored secret becomes a redaction target; exhaustions that passed while stopped end now. */
  private async load(): Promise<void> {
    try {
      for (const row of await this.rows()) {
        try {
          this.opts.addSecret(this.sealer.open(row.secret));
          if (row.refreshToken) this.opts.addSecret(this.sealer.open(row.refreshToken));
        } catch {
          // a key that does not open it: reported when the account is used
        }
      }
    } catch (err) {
      this.opts.log.warn({ err }, "stored accounts not read");
    }
    await this.timer.schedule();
  }

  private get t() {
    return this.opts.store.t;
  }

  private rows(where?: SQL): Promise<AccountRow[]> {
    const { accounts } = this.t;
    const q = this.opts.store.read.select().from(accounts);
    return where ? q.where(where) : q;
  }

  private async find(idOrLabel: string): Promise<AccountRow | undefined> {
    const { accounts } = this.t;
    const rows = await this.rows(or(eq(accounts.id, idOrLabel), eq(accounts.label, idOrLabel)));
    return rows.find((r) => r.id === idOrLabel) ?? rows[0];
  }

  private async row(idOrLabel: string): Promise<AccountRow> {
    const row = await this.find(idOrLabel);
    if (!row) throw new DomainError("ACCOUNT_NOT_FOUND", `No account "${idOrLabel}" (see yard account list)`, { kind: "NOT_FOUND" });
    return row;
  }

  private async update(id: string, patch: Partial<AccountRow>): Promise<void> {
    const { accounts } = this.t;
    await this.opts.store.tx(async (tx) => {
      await tx
        .update(accounts)
        .set({ ...patch, updatedAt: Date.now() })
        .where(eq(accounts.id, id));
    });
  }

  private async info(row: AccountRow, now = Date.now()): Promise<AccountInfo> {
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
      activeAgents: await this.opts.activeAgentsOf(row.id),
    };
  }

  async list(filter: { provider?: AccountProvider } = {}): Promise<AccountInfo[]> {
    const now = Date.now();
    const rows = await this.rows(filter.provider ? eq(this.t.accounts.provider, filter.provider) : undefined);
    return Promise.all(rows.sort((a, b) => a.createdAt - b.createdAt).map((r) => this.info(r, now)));
  }

  async get(idOrLabel: string): Promise<AccountInfo> {
    return this.info(await this.row(idOrLabel));
  }

  /** Whether agents of this provider run on registered accounts (else on the server's own env). */
  async has(provider: string): Promise<boolean> {
    const { accounts } = this.t;
    const hit = await first(this.opts.store.read.select({ id: accounts.id }).from(accounts).where(eq(accounts.provider, provider)).limit(1));
    return hit !== undefined;
  }

  async add(raw: AddAccountInput): Promise<AccountInfo> {
    const input = AddAccountInput.parse(raw);
    checkSupported(input.provider, input.kind);
    const id = `acct_${uuidv7()}`;
    const now = Date.now();
    const expiresAt = input.expiresAt === undefined ? null : typeof input.expiresAt === "number" ? input.expiresAt : Date.parse(input.expiresAt);
    const sealed = { secret: this.sealer.seal(input.secret), refreshToken: input.refreshToken ? this.sealer.seal(input.refreshToken) : null };
    const { accounts } = this.t;
    // the checks and the insert in one transaction: two adds at once cannot both pass them
    const label = await this.opts.store.tx(async (tx) => {
      const existing = await tx.select().from(accounts);
      const label = input.label ?? input.email ?? nextLabel(input.provider, existing);
      if (existing.some((r) => r.label === label)) throw labelTaken(label);
      if (existing.some((r) => this.tryOpen(r.secret) === input.secret)) throw new DomainError("ACCOUNT_EXISTS", "That credential is already registered under another label", { kind: "CONFLICT" });
      this.opts.addSecret(input.secret);
      if (input.refreshToken) this.opts.addSecret(input.refreshToken);
      const stored = await tx
        .insert(accounts)
        .values({
          id,
          provider: input.provider,
          label,
          email: input.email ?? null,
          kind: input.kind,
          ...sealed,
          secretHint: `…${input.secret.slice(-4)}`,
          expiresAt,
          configDir: join(this.opts.home, "accounts", id),
          createdAt: now,
          updatedAt: now,
        })
        // another server added the label meanwhile (the unique index decides)
        .onConflictDoNothing()
        .returning({ id: accounts.id });
      if (stored.length === 0) throw labelTaken(label);
      return label;
    });
    await this.publish("account.added", { accountId: id, provider: input.provider, label });
    this.notify(input.provider);
    return this.get(id);
  }

  async remove(idOrLabel: string, opts: { force?: boolean } = {}): Promise<void> {
    const row = await this.row(idOrLabel);
    const active = await this.opts.activeAgentsOf(row.id);
    if (active > 0 && !opts.force) throw new DomainError("ACCOUNT_IN_USE", `${active} running agent(s) use "${row.label}": stop them first, or remove with force`, { kind: "CONFLICT" });
    const { accounts } = this.t;
    const removed = await this.opts.store.tx((tx) => tx.delete(accounts).where(eq(accounts.id, row.id)).returning({ id: accounts.id }));
    if (removed.length === 0) throw new DomainError("ACCOUNT_NOT_FOUND", `No account "${idOrLabel}" (see yard account list)`, { kind: "NOT_FOUND" });
    rmSync(row.configDir, { recursive: true, force: true });
    await this.publish("account.removed", { accountId: row.id, label: row.label });
  }

  /** Make an exhausted or invalid account selectable again now (a human knows better). */
  async reset(idOrLabel: string): Promise<AccountInfo> {
    const row = await this.row(idOrLabel);
    await this.update(row.id, { exhaustedUntil: null, exhaustedReason: null, invalidReason: null });
    await this.publish("account.became_available", { accountId: row.id, label: row.label });
    this.notify(row.provider);
    return this.get(row.id);
  }

  /**
   * The account for the next process run: `prefer` when it is usable, else the least recently
   * used usable one; its credentials refreshed when due and written into its config dir. Null
   * when every account of the provider is exhausted or invalid.
   */
  async acquire(provider: string, opts: { prefer?: string | null } = {}): Promise<AcquiredAccount | null> {
    await this.ready;
    for (;;) {
      const now = Date.now();
      const usable = (await this.rows(eq(this.t.accounts.provider, provider)))
        .filter((r) => usableAt(r, now))
        .sort((a, b) => (a.lastUsedAt ?? 0) - (b.lastUsedAt ?? 0) || a.createdAt - b.createdAt);
      const row = usable.find((r) => r.id === opts.prefer || r.label === opts.prefer) ?? usable[0];
      if (!row) return null;
      try {
        const creds = await this.credentials(row);
        const m = await materialize(row.configDir, creds);
        await this.update(row.id, { lastUsedAt: now });
        return { id: row.id, label: row.label, configDir: row.configDir, ...m };
      } catch (err) {
        await this.markInvalid(row, err instanceof Error ? err.message : String(err));
      }
    }
  }

  /**
   * The account's credential as files for one run elsewhere (an agent on a worker): materialized
   * into an empty folder here, every file it wrote read back, the folder removed. Only what the
   * CLI needs to log in; never the account's own config dir (other agents' sessions live there).
   */
  async portable(accountId: string): Promise<Array<{ path: string; content: string }>> {
    const row = await this.row(accountId);
    const dir = await mkdtemp(join(tmpdir(), "switchyard-credential-"));
    try {
      await materialize(dir, await this.credentials(row));
      const files: Array<{ path: string; content: string }> = [];
      for (const name of await readdir(dir, { recursive: true })) {
        const path = join(dir, name);
        if ((await stat(path)).isFile()) files.push({ path: name, content: await readFile(path, "utf8") });
      }
      return files;
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  }

  /**
   * What a CLI rotated in an agent's own config dir elsewhere (on a worker), read back after its
   * run: `read` gets the files to read there. Kept when newer than what the account holds, so the
   * next run (here or on any worker) starts from the tokens the CLI last had; a refresh token the
   * CLI used is single-use, and the account's copy of it would be dead. True when kept.
   */
  async absorbRotated(accountId: string, read: (paths: string[]) => Promise<Array<{ path: string; content: string }>>): Promise<boolean> {
    const row = await this.row(accountId);
    const paths = rotatedFiles(row.provider);
    if (row.kind !== "oauth" || paths.length === 0) return false;
    const files = await read(paths);
    if (files.length === 0) return false;
    const dir = await mkdtemp(join(tmpdir(), "switchyard-rotated-"));
    try {
      for (const f of files) {
        const path = join(dir, f.path);
        if (!path.startsWith(`${dir}/`)) continue;
        await mkdir(dirname(path), { recursive: true, mode: 0o700 });
        await writeFile(path, f.content, { mode: 0o600 });
      }
      const rotated = await rotatedTokens(row.provider, dir, { expiresAt: row.expiresAt });
      if (!rotated) return false;
      const creds = this.credentialsAsStored(row);
      await this.keep(row.id, { ...creds, secret: rotated.accessToken, refreshToken: rotated.refreshToken ?? creds.refreshToken, expiresAt: rotated.expiresAt });
      this.opts.log.info({ accountId: row.id, label: row.label }, "account OAuth tokens rotated by a CLI on a worker kept");
      return true;
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  }

  private tryOpen(sealed: string): string | null {
    try {
      return this.sealer.open(sealed);
    } catch {
      return null;
    }
  }

  /** The account's credentials as its row holds them (decrypted). */
  private credentialsAsStored(row: AccountRow): Credentials {
    const secret = this.tryOpen(row.secret);
    if (secret === null) throw new Error("its credential cannot be decrypted with this data dir's account-key: add the account again");
    return {
      provider: row.provider,
      kind: row.kind,
      secret,
      refreshToken: row.refreshToken ? this.tryOpen(row.refreshToken) : null,
      expiresAt: row.expiresAt,
      email: row.email,
    };
  }

  /** The account's current credentials: rotated by the CLI, or refreshed here when close to expiry. */
  private async credentials(row: AccountRow): Promise<Credentials> {
    let creds = this.credentialsAsStored(row);
    if (row.kind !== "oauth") return creds;
    const rotated = await rotatedTokens(row.provider, row.configDir, { expiresAt: row.expiresAt });
    if (rotated) {
      creds = { ...creds, secret: rotated.accessToken, refreshToken: rotated.refreshToken ?? creds.refreshToken, expiresAt: rotated.expiresAt };
      await this.keep(row.id, creds);
    }
    if (creds.expiresAt === null || creds.expiresAt - Date.now() > REFRESH_MARGIN_MS) return creds;
    if (!creds.refreshToken) {
      throw new Error(`its OAuth token ${creds.expiresAt <= Date.now() ? "expired" : "expires"} at ${new Date(creds.expiresAt).toISOString()} and there is no refresh token: log in again and re-add it`);
    }
    const pending = this.refreshing.get(row.id);
    if (pending) {
      await pending;
      return this.credentials(await this.row(row.id));
    }
    const refreshToken = creds.refreshToken;
    const job = refreshOAuth(this.opts.claudeOAuth, refreshToken).then(async (fresh) => {
      creds = { ...creds, secret: fresh.accessToken, refreshToken: fresh.refreshToken, expiresAt: fresh.expiresAt };
      await this.keep(row.id, creds);
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

  /** Store renewed credentials, sealed. */
  private async keep(id: string, c: Credentials): Promise<void> {
    this.opts.addSecret(c.secret);
    if (c.refreshToken) this.opts.addSecret(c.refreshToken);
    await this.update(id, {
      secret: this.sealer.seal(c.secret),
      refreshToken: c.refreshToken ? this.sealer.seal(c.refreshToken) : null,
      secretHint: `…${c.secret.slice(-4)}`,
      expiresAt: c.expiresAt,
    });
  }

  private async markInvalid(row: AccountRow, reason: string): Promise<void> {
    const text = `Account "${row.label}" cannot be used: ${reason}`;
    await this.update(row.id, { invalidReason: text });
    this.opts.log.warn({ accountId: row.id, label: row.label }, text);
    await this.publish("account.invalidated", { accountId: row.id, label: row.label, reason: text.slice(0, 2000) });
  }

  /** A usage limit: skipped until `until` (the announced reset, else now + the cooldown). */
  async markExhausted(accountId: string, until: number | null, reason: string): Promise<{ until: number } | null> {
    const { accounts } = this.t;
    const at = until !== null && until > Date.now() ? until : Date.now() + this.opts.cooldownMs;
    const set = { exhaustedUntil: at, exhaustedReason: reason.slice(0, 2000), updatedAt: Date.now() };
    const [row] = await this.opts.store.tx((tx) => tx.update(accounts).set(set).where(eq(accounts.id, accountId)).returning({ id: accounts.id, label: accounts.label }));
    if (!row) return null;
    await this.publish("account.exhausted", { accountId: row.id, label: row.label, until: new Date(at).toISOString(), reason: reason.slice(0, 2000) });
    await this.timer.schedule();
    return { until: at };
  }

  /** The earliest time an exhausted account of the provider frees up, when one will. */
  async nextFreeAt(provider: string): Promise<number | null> {
    const times = (await this.rows(eq(this.t.accounts.provider, provider))).filter((r) => !r.invalidReason && r.exhaustedUntil !== null).map((r) => r.exhaustedUntil as number);
    return times.length > 0 ? Math.min(...times) : null;
  }

  /** How many accounts of the provider could take a run now, leaving out `except`. */
  async usableCount(provider: string, except?: string): Promise<number> {
    const now = Date.now();
    return (await this.rows(eq(this.t.accounts.provider, provider))).filter((r) => r.id !== except && usableAt(r, now)).length;
  }

  /** Every account's label by id (one read for a whole list of agents). */
  async labels(): Promise<Map<string, string>> {
    const { accounts } = this.t;
    const rows = await this.opts.store.read.select({ id: accounts.id, label: accounts.label }).from(accounts);
    return new Map(rows.map((r) => [r.id, r.label]));
  }

  async label(accountId: string | null): Promise<string | null> {
    if (!accountId) return null;
    const { accounts } = this.t;
    return (await first(this.opts.store.read.select({ label: accounts.label }).from(accounts).where(eq(accounts.id, accountId))))?.label ?? null;
  }

  /** Called when an account of a provider becomes usable (added, reset, or its limit passed). */
  onAvailable(listener: (provider: AccountProvider) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  private notify(provider: AccountProvider): void {
    for (const l of this.listeners) l(provider);
  }

  /** An account whose limit passed: announced once (by the server that freed it), heard by every listener. */
  private freed(account: FreedAccount): void {
    if (account.announced) void this.publish("account.became_available", { accountId: account.id, label: account.label });
    this.notify(account.provider);
  }

  /** Stops the timer; resolves once a pass under way is over. */
  close(): Promise<void> {
    this.listeners.clear();
    return this.timer.close();
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

function labelTaken(label: string): DomainError<"ACCOUNT_EXISTS"> {
  return new DomainError("ACCOUNT_EXISTS", `An account labelled "${label}" exists: pick another --label`, { kind: "CONFLICT" });
}

function nextLabel(provider: string, rows: AccountRow[]): string {
  for (let n = 1; ; n++) {
    const label = `${provider}-${n}`;
    if (!rows.some((r) => r.label === label)) return label;
  }
}
