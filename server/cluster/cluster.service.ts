import { randomUUID } from "node:crypto";
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { hostname } from "node:os";
import { join } from "node:path";
import { eq } from "drizzle-orm";
import type { Sql } from "postgres";
import { PgStore } from "../db/pg/pg-store";
import type { Store } from "../db/store";
import { processAlive } from "../lib/process-alive";
import type { Logger } from "../log";
import { CommandBus, type CommandSignals } from "./commands";
import { LEASE_RENEW_MS, LeaseBook, type LeaseKind } from "./leases";

const COMMANDS_CHANNEL = "switchyard_commands";
const RESULTS_CHANNEL = "switchyard_command_results";

/**
 * This server's id: kept in its data dir, so a restarted server is the same server and takes its
 * own leases back at once (another server would wait for them to expire). Each server of a
 * database has a data dir of its own.
 */
export function serverIdOf(home: string): string {
  const file = join(home, "server-id");
  if (existsSync(file)) {
    const id = readFileSync(file, "utf8").trim();
    if (id) return id;
  }
  mkdirSync(home, { recursive: true });
  const id = randomUUID();
  writeFileSync(file, `${id}\n`, { mode: 0o600 });
  return id;
}

function pgSignals(sql: Sql): CommandSignals {
  return {
    notifyServer: async (serverId) => void (await sql`SELECT pg_notify(${COMMANDS_CHANNEL}, ${serverId})`),
    notifyResult: async (id) => void (await sql`SELECT pg_notify(${RESULTS_CHANNEL}, ${id})`),
    async listen(serverId, onCommand, onResult) {
      // on every (re)connect too: what was announced while the connection was down is looked at
      const a = await sql.listen(COMMANDS_CHANNEL, (payload) => payload === serverId && onCommand(), onCommand);
      const b = await sql.listen(RESULTS_CHANNEL, onResult);
      return async () => {
        await a.unlisten();
        await b.unlisten();
      };
    },
  };
}

/** Another live server runs with this server's id (the same data dir). */
export class ServerInUse extends Error {
  readonly code = "SERVER_IN_USE";
}

export type ClusterDeps = { store: Store; home: string; log: Logger; version: string };

/**
 * The servers of one database (docs/SCALING.md): this server's identity and heartbeat, its leases
 * on runs and daemons (renewed every 2 s), the commands other servers send it, and the scan that
 * takes over what a lost server owned. On SQLite there is one server: the same code runs, nothing
 * is ever another server's.
 */
export class Cluster {
  readonly serverId: string;
  readonly leases: LeaseBook;
  readonly commands: CommandBus;
  /** Several servers may share the database (PostgreSQL). */
  readonly shared: boolean;
  private readonly lostHandlers = new Map<LeaseKind, (id: string) => void>();
  private readonly scans: Array<() => Promise<unknown>> = [];
  private timer: NodeJS.Timeout | undefined;
  private ticking: Promise<void> | undefined;
  private startedAt = Date.now();
  private ticks = 0;

  constructor(private readonly deps: ClusterDeps) {
    this.serverId = serverIdOf(deps.home);
    this.leases = new LeaseBook(deps.store, this.serverId);
    this.shared = deps.store instanceof PgStore;
    this.commands = new CommandBus(deps.store, this.serverId, deps.log, deps.store instanceof PgStore ? pgSignals(deps.store.db.$client as unknown as Sql) : undefined);
  }

  /** What to do when another server took over something this one owned (stop it here, writing nothing). */
  onLost(kind: LeaseKind, fn: (id: string) => void): void {
    this.lostHandlers.set(kind, fn);
  }

  /** Run on every tick of a shared database: take over what lost servers owned. */
  onScan(fn: () => Promise<unknown>): void {
    this.scans.push(fn);
  }

  /** Register this server and start its heartbeat (leases, commands, takeover scans). */
  async start(url: string): Promise<void> {
    const { servers } = this.deps.store.t;
    await this.refuseTwin();
    this.startedAt = Date.now();
    const row = { url, hostname: hostname(), pid: process.pid, version: this.deps.version, startedAt: this.startedAt, heartbeatAt: this.startedAt, stoppedAt: null };
    await this.deps.store.tx((tx) => tx.insert(servers).values({ id: this.serverId, ...row }).onConflictDoUpdate({ target: servers.id, set: row }));
    await this.commands.start();
    this.timer = setInterval(() => void this.tick(), LEASE_RENEW_MS);
    this.timer.unref();
  }

  /**
   * Two live servers with one id (one data dir) would each take the other's leases as their own:
   * refused. A row of this id whose process is gone (kill -9, then a restart) is this server's past.
   */
  private async refuseTwin(): Promise<void> {
    const { servers } = this.deps.store.t;
    const [row] = await this.deps.store.read.select().from(servers).where(eq(servers.id, this.serverId));
    if (!row || row.stoppedAt !== null || row.heartbeatAt < Date.now() - 10_000 || row.pid === process.pid) return;
    if (row.hostname === hostname() && !processAlive(row.pid)) return;
    throw new ServerInUse(
      `Another Switchyard server (pid ${row.pid} on ${row.hostname}, ${row.url}) runs with this data dir's server id (${join(this.deps.home, "server-id")}): ` +
        "each server of a database needs a data dir of its own (SWITCHYARD_HOME); stop the other one or give this one another SWITCHYARD_HOME.",
    );
  }

  /** One heartbeat: renew leases (dropping what was lost), then, on a shared database, commands and takeovers. */
  tick(): Promise<void> {
    this.ticking ??= this.tickOnce()
      .catch((err: unknown) => this.deps.log.warn({ err: (err as Error).message }, "cluster heartbeat failed"))
      .finally(() => (this.ticking = undefined));
    return this.ticking;
  }

  private async tickOnce(): Promise<void> {
    const { servers } = this.deps.store.t;
    const now = Date.now();
    await this.deps.store.tx((tx) => tx.update(servers).set({ heartbeatAt: now }).where(eq(servers.id, this.serverId)));
    for (const lost of await this.leases.renew()) {
      // what it published for it meanwhile was refused by the fence (counted so far)
      const refusedEvents = this.deps.store.events.refusedFor?.(lost.kind, lost.id) ?? 0;
      this.deps.log.warn({ ...lost, refusedEvents }, "another server took over what this server owned: stopped here");
      this.lostHandlers.get(lost.kind)?.(lost.id);
    }
    if (!this.shared) return;
    this.commands.drain();
    for (const scan of this.scans) await scan();
    if (++this.ticks % 30 === 0) await this.commands.prune(now);
  }

  /** Graceful stop: leases expire now (another server takes over at once), the row says stopped. */
  async stop(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    await this.ticking;
    await this.commands.close();
    await this.leases.expireAll().catch(() => {});
    const { servers } = this.deps.store.t;
    await this.deps.store.tx((tx) => tx.update(servers).set({ stoppedAt: Date.now() }).where(eq(servers.id, this.serverId))).catch(() => {});
  }

  /** The servers of this database with a heartbeat in the last 10 s (for /health and the dashboard). */
  async live(): Promise<Array<{ id: string; url: string; hostname: string; pid: number; version: string; startedAt: number; heartbeatAt: number; self: boolean }>> {
    const { servers } = this.deps.store.t;
    const rows = await this.deps.store.read.select().from(servers);
    const since = Date.now() - 10_000;
    return rows.filter((r) => r.stoppedAt === null && r.heartbeatAt >= since).map(({ stoppedAt: _s, ...r }) => ({ ...r, self: r.id === this.serverId }));
  }
}
