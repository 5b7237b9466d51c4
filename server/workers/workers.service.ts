import { and, eq, inArray, isNotNull, isNull, lt, sql } from "drizzle-orm";
import type { WebSocket } from "ws";
import { WorkerCapabilities, WorkerMessage, WORKER_CLOSE, WORKER_NAME, type WorkerInfo, type WorkerState } from "../../shared/workers";
import type { AgentHost } from "../agents/agent-host";
import type { Placed, WorkerPlacement } from "../agents/agents.service";
import type { Cluster } from "../cluster/cluster.service";
import { first, type Store } from "../db/store";
import { DomainError } from "../errors";
import type { EventBus } from "../events/bus";
import type { Logger } from "../log";
import { remoteHost } from "./remote-host";
import { WorkerLink } from "./worker-link";
import { claimedWorker, mintWorkerToken, tokenMatches } from "./worker-tokens";

/** The server pings every connected worker this often; its heartbeat row is written as often. */
export const WORKER_HEARTBEAT_MS = 1_000;
/** A worker silent this long is cut off (its connection is dead even if TCP has not noticed). */
export const WORKER_SILENT_MS = 5_000;
/** No heartbeat this long: the worker is lost and its running agents are interrupted (within 15 s in all). */
export const WORKER_LOST_MS = 11_000;
/** A worker that has not heard from its server this long stops its agents (yard worker; below the lost delay). */
export const WORKER_SELF_STOP_MS = 10_000;
/** How long a new connection has to say hello. */
const HELLO_TIMEOUT_MS = 10_000;
/** Agent statuses that hold a place on a worker. */
const RUNNING = ["starting", "running"] as const;

export interface WorkersDeps {
  store: Store;
  bus: EventBus;
  log: Logger;
  cluster: Cluster;
  /** The git URL a worker that reached this server at `serverUrl` clones a repository from (a URL's mirror: that URL). */
  repoUrl(serverUrl: string, repoPath: string): string;
  headOf(repoPath: string): Promise<string>;
}

/**
 * Workers on other machines (docs/SCALING.md "Agents on other machines"): their tokens, their
 * connections to this server (a WebSocket each, at /worker), their liveness, and where a new agent
 * runs. What runs on a worker is driven from here through its host (remote-host.ts).
 */
export class WorkersService implements WorkerPlacement {
  private readonly links = new Map<string, WorkerLink>();
  private readonly hosts = new Map<string, AgentHost>();
  private readonly caps = new Map<string, WorkerCapabilities>();
  private readonly outputListeners = new Map<string, Set<(agentId: string, session: number) => void>>();
  /** name -> token hash, for the request guard (synchronous); refreshed from the database. */
  private tokens = new Map<string, string>();
  private timer: NodeJS.Timeout | undefined;
  private ticking = false;
  private refreshedAt = 0;
  private readonly lostHandlers: Array<(name: string) => Promise<string[]>> = [];
  private readonly placeHandlers: Array<() => Promise<void>> = [];
  private closed = false;

  constructor(private readonly deps: WorkersDeps) {}

  private get t() {
    return this.deps.store.t.workers;
  }

  async start(): Promise<void> {
    await this.refreshTokens();
    this.timer = setInterval(() => void this.tick(), WORKER_HEARTBEAT_MS);
    this.timer.unref();
  }

  async stop(): Promise<void> {
    this.closed = true;
    clearInterval(this.timer);
    for (const link of this.links.values()) link.close(WORKER_CLOSE.goingAway, "server shutting down");
    this.links.clear();
  }

  /** When a worker is declared lost: interrupt its agents (returns their ids). */
  onLost(handler: (name: string) => Promise<string[]>): void {
    this.lostHandlers.push(handler);
  }

  /** When a place may have opened (a worker connected or undrained, a tick with agents queued). */
  onPlaceOpened(handler: () => Promise<void>): void {
    this.placeHandlers.push(handler);
  }

  // ---- tokens ----

  /** A new token for a worker (made if new; a previous token stops working). Shown once. */
  async createToken(name: string): Promise<{ name: string; token: string }> {
    if (!WORKER_NAME.test(name)) throw new DomainError("BAD_INPUT", `"${name}" is not a worker name: lowercase letters, digits, dots, dashes, underscores`);
    const { token, hash } = mintWorkerToken(name);
    await this.deps.store.tx(async (tx) => {
      await tx
        .insert(this.t)
        .values({ name, tokenHash: hash, createdAt: Date.now() })
        .onConflictDoUpdate({ target: this.t.name, set: { tokenHash: hash, revokedAt: null } });
    });
    this.tokens.set(name, hash);
    // a connection made with the old token ends
    this.links.get(name)?.close(WORKER_CLOSE.revoked, "its token was replaced");
    await this.deps.bus.publish("worker.token_created", { name });
    return { name, token };
  }

  async revoke(name: string): Promise<void> {
    const done = await this.deps.store.tx((tx) => tx.update(this.t).set({ revokedAt: Date.now() }).where(eq(this.t.name, name)).returning({ name: this.t.name }));
    if (done.length === 0) throw notFound(name);
    this.tokens.delete(name);
    this.links.get(name)?.close(WORKER_CLOSE.revoked, "its token was revoked");
    await this.deps.bus.publish("worker.revoked", { name });
  }

  /** The worker a bearer token belongs to (valid, not revoked), or null: the request guard's question. */
  workerOfToken(token: string): string | null {
    const name = claimedWorker(token);
    if (!name) return null;
    const hash = this.tokens.get(name);
    return hash && tokenMatches(token, hash) ? name : null;
  }

  private async refreshTokens(): Promise<void> {
    const rows = await this.deps.store.read.select({ name: this.t.name, hash: this.t.tokenHash }).from(this.t).where(isNull(this.t.revokedAt));
    this.tokens = new Map(rows.map((r) => [r.name, r.hash]));
    this.refreshedAt = Date.now();
  }

  // ---- connections ----

  /** A WebSocket at /worker whose token named `name` (checked by the guard): hello, welcome, then calls. */
  accept(socket: WebSocket, name: string): void {
    let link: WorkerLink | undefined;
    const helloTimer = setTimeout(() => socket.close(WORKER_CLOSE.badHello, "no hello"), HELLO_TIMEOUT_MS);
    helloTimer.unref();
    socket.on("message", (data, isBinary) => {
      if (isBinary) return;
      const raw = data.toString();
      if (link) return link.receive(raw);
      clearTimeout(helloTimer);
      void this.hello(socket, name, raw).then(
        (made) => {
          link = made;
        },
        (err: unknown) => {
          this.deps.log.warn({ worker: name, err: (err as Error).message }, "a worker's hello was refused");
          socket.close(WORKER_CLOSE.badHello, (err as Error).message.slice(0, 120));
        },
      );
    });
    socket.on("close", () => {
      clearTimeout(helloTimer);
      if (!link) return;
      link.close();
      if (this.links.get(name) === link) {
        this.links.delete(name);
        if (!this.closed) void this.deps.bus.publish("worker.disconnected", { name, reason: "its connection closed" }).catch(() => undefined);
      }
    });
    socket.on("error", () => undefined);
  }

  private async hello(socket: WebSocket, name: string, raw: string): Promise<WorkerLink> {
    const msg = WorkerMessage.parse(JSON.parse(raw));
    if (msg.type !== "hello") throw new Error("the first frame must be hello");
    const caps = WorkerCapabilities.parse(msg.capabilities);
    const now = Date.now();
    const [row] = await this.deps.store.tx((tx) =>
      tx
        .update(this.t)
        .set({ epoch: sql`${this.t.epoch} + 1`, serverId: this.deps.cluster.serverId, connectedAt: now, heartbeatAt: now, lostAt: null, capabilities: JSON.stringify(caps) })
        .where(and(eq(this.t.name, name), isNull(this.t.revokedAt)))
        .returning({ epoch: this.t.epoch }),
    );
    if (!row) throw new DomainError("WORKER_REVOKED", `Worker ${name}'s token was revoked`);
    // its sessions go on only where the agent is still its own, under the epoch it was started with
    const stop: Array<{ agentId: string; session: number }> = [];
    const agents = this.deps.store.t.agents;
    for (const s of msg.running) {
      const kept = await this.deps.store.tx((tx) =>
        tx
          .update(agents)
          .set({ workerEpoch: row.epoch })
          .where(and(eq(agents.id, s.agentId), eq(agents.worker, name), eq(agents.workerEpoch, s.epoch), eq(agents.sessionNumber, s.session), inArray(agents.status, [...RUNNING])))
          .returning({ id: agents.id }),
      );
      if (kept.length === 0) stop.push({ agentId: s.agentId, session: s.session });
    }
    this.links.get(name)?.close(WORKER_CLOSE.replaced, "another connection of this worker took over");
    const link = new WorkerLink(socket, name, row.epoch, caps, this.deps.log);
    this.links.set(name, link);
    this.caps.set(name, caps);
    link.onOutput((agentId, session) => {
      for (const l of this.outputListeners.get(name) ?? []) l(agentId, session);
    });
    link.send({ type: "welcome", epoch: row.epoch, heartbeatMs: WORKER_HEARTBEAT_MS, lostAfterMs: WORKER_SELF_STOP_MS, stop });
    await this.deps.bus.publish("worker.connected", { name, epoch: row.epoch, hostname: caps.hostname, capacity: caps.capacity, labels: caps.labels, providers: caps.providers.map((p) => p.name) });
    this.deps.log.info({ worker: name, epoch: row.epoch, hostname: caps.hostname, stopped: stop.length }, "worker connected");
    void this.placeOpened();
    return link;
  }

  /** Told when the output of an agent's session on a worker grew (its notices, on whichever connection it is). */
  onOutput(name: string, listener: (agentId: string, session: number) => void): () => void {
    let set = this.outputListeners.get(name);
    if (!set) this.outputListeners.set(name, (set = new Set()));
    set.add(listener);
    return () => set.delete(listener);
  }

  // ---- placement (WorkerPlacement) ----

  hostOf(name: string): AgentHost | undefined {
    if (!this.links.has(name)) return undefined;
    let host = this.hosts.get(name);
    if (!host) {
      host = remoteHost({
        name,
        link: () => this.links.get(name),
        capabilities: () => this.caps.get(name)!,
        repoUrl: (repoPath) => this.deps.repoUrl(this.caps.get(name)!.serverUrl, repoPath),
        headOf: (repoPath) => this.deps.headOf(repoPath),
        onOutput: (listener) => this.onOutput(name, listener),
      });
      this.hosts.set(name, host);
    }
    return host;
  }

  async serverOf(name: string): Promise<string | undefined> {
    const row = await first(this.deps.store.read.select({ serverId: this.t.serverId, heartbeatAt: this.t.heartbeatAt, lostAt: this.t.lostAt, revokedAt: this.t.revokedAt }).from(this.t).where(eq(this.t.name, name)));
    if (!row?.serverId || row.serverId === this.deps.cluster.serverId || row.lostAt !== null || row.revokedAt !== null) return undefined;
    // connected to that server: its heartbeat, written there every second, is fresh
    return row.heartbeatAt !== null && Date.now() - row.heartbeatAt < WORKER_SILENT_MS ? row.serverId : undefined;
  }

  async place(req: { provider: string; worker?: string; labels: string[] }): Promise<Placed> {
    const rows = await this.deps.store.read.select({ name: this.t.name, drained: this.t.drained, revokedAt: this.t.revokedAt }).from(this.t);
    const registered = rows.filter((r) => r.revokedAt === null);
    if (req.worker !== undefined) {
      const row = rows.find((r) => r.name === req.worker);
      if (!row) throw notFound(req.worker);
      if (row.revokedAt !== null) throw new DomainError("WORKER_REVOKED", `Worker ${req.worker}'s token was revoked`, { kind: "CONFLICT" });
    } else if (registered.length === 0) {
      if (req.labels.length > 0) throw new DomainError("WORKER_NOT_FOUND", `No worker is registered, so none has the labels ${req.labels.join(", ")}`, { kind: "NOT_FOUND" });
      return { worker: null };
    }
    const running = await this.runningCounts();
    const candidates = registered.filter((r) => req.worker === undefined || r.name === req.worker);
    const why: string[] = [];
    let best: { name: string; load: number; epoch: number } | undefined;
    for (const r of candidates) {
      const link = this.links.get(r.name);
      const caps = link?.capabilities;
      if (!link || !caps) {
        why.push(`${r.name} is not connected${this.deps.cluster.shared ? " to this server" : ""}`);
        continue;
      }
      if (r.drained) {
        why.push(`${r.name} is drained`);
        continue;
      }
      if (!caps.providers.some((p) => p.name === req.provider)) {
        why.push(`${r.name} has no ${req.provider} CLI`);
        continue;
      }
      const missing = req.labels.filter((l) => !caps.labels.includes(l));
      if (missing.length > 0) {
        why.push(`${r.name} lacks the label${missing.length > 1 ? "s" : ""} ${missing.join(", ")}`);
        continue;
      }
      const n = running.get(r.name) ?? 0;
      if (n >= caps.capacity) {
        why.push(`${r.name} is full (${n}/${caps.capacity})`);
        continue;
      }
      const load = n / caps.capacity;
      if (!best || load < best.load) best = { name: r.name, load, epoch: link.epoch };
    }
    if (best) return { worker: best.name, epoch: best.epoch };
    const what = req.worker ? `worker ${req.worker}` : "a worker";
    return { queued: `waiting for ${what} that can take it: ${why.join("; ") || "none is registered"}` };
  }

  private async runningCounts(): Promise<Map<string, number>> {
    const agents = this.deps.store.t.agents;
    const rows = await this.deps.store.read
      .select({ worker: agents.worker, n: sql<number>`count(*)` })
      .from(agents)
      .where(and(isNotNull(agents.worker), inArray(agents.status, [...RUNNING])))
      .groupBy(agents.worker);
    return new Map(rows.map((r) => [r.worker!, Number(r.n)]));
  }

  async drain(name: string, drained: boolean): Promise<WorkerInfo> {
    const done = await this.deps.store.tx((tx) => tx.update(this.t).set({ drained }).where(eq(this.t.name, name)).returning({ name: this.t.name }));
    if (done.length === 0) throw notFound(name);
    await this.deps.bus.publish("worker.drained", { name, drained });
    if (!drained) void this.placeOpened();
    return this.get(name);
  }

  // ---- views ----

  async list(): Promise<WorkerInfo[]> {
    const rows = await this.deps.store.read.select().from(this.t).orderBy(this.t.name);
    const running = await this.runningCounts();
    const servers = new Map((await this.deps.cluster.live()).map((s) => [s.id, s.url] as const));
    return rows.map((r) => this.info(r, running.get(r.name) ?? 0, servers));
  }

  async get(name: string): Promise<WorkerInfo> {
    const found = (await this.list()).find((w) => w.name === name);
    if (!found) throw notFound(name);
    return found;
  }

  private info(r: typeof this.t.$inferSelect, running: number, servers: Map<string, string>): WorkerInfo {
    const iso = (ms: number | null) => (ms === null ? null : new Date(ms).toISOString());
    let caps: WorkerCapabilities | null = null;
    try {
      caps = r.capabilities ? WorkerCapabilities.parse(JSON.parse(r.capabilities)) : null;
    } catch {
      caps = null;
    }
    // connected here: its link says; connected to another server of the database: its fresh heartbeat
    // (a link of this server that just closed leaves a heartbeat fresh for a few seconds)
    const elsewhere = r.serverId !== this.deps.cluster.serverId;
    const fresh = elsewhere && r.heartbeatAt !== null && Date.now() - r.heartbeatAt < WORKER_SILENT_MS;
    const state: WorkerState =
      r.revokedAt !== null ? "revoked" : r.lostAt !== null ? "lost" : r.connectedAt === null ? "new" : this.links.has(r.name) || fresh ? "connected" : "disconnected";
    return {
      name: r.name,
      state,
      drained: r.drained,
      capabilities: caps,
      runningAgents: running,
      server: state === "connected" && r.serverId ? (servers.get(r.serverId) ?? null) : null,
      connectedAt: iso(r.connectedAt),
      heartbeatAt: iso(r.heartbeatAt),
      lostAt: iso(r.lostAt),
      createdAt: iso(r.createdAt)!,
    };
  }

  // ---- liveness ----

  private async tick(): Promise<void> {
    if (this.ticking || this.closed) return;
    this.ticking = true;
    try {
      const now = Date.now();
      const alive: string[] = [];
      for (const [name, link] of this.links) {
        if (now - link.lastSeen > WORKER_SILENT_MS) {
          this.deps.log.warn({ worker: name, silentMs: now - link.lastSeen }, "a worker went silent: its connection is cut");
          link.close();
          this.links.delete(name);
          await this.deps.bus.publish("worker.disconnected", { name, reason: `silent for ${Math.round((now - link.lastSeen) / 1000)} s` });
          continue;
        }
        link.ping();
        alive.push(name);
      }
      if (alive.length > 0) {
        await this.deps.store.tx((tx) => tx.update(this.t).set({ heartbeatAt: now }).where(and(inArray(this.t.name, alive), eq(this.t.serverId, this.deps.cluster.serverId))));
      }
      await this.findLost(now);
      // tokens made or revoked on another server of the database
      if (this.deps.cluster.shared && now - this.refreshedAt > 3_000) await this.refreshTokens();
      const agents = this.deps.store.t.agents;
      if (await first(this.deps.store.read.select({ id: agents.id }).from(agents).where(eq(agents.status, "queued")).limit(1))) await this.placeOpened();
    } catch (err) {
      this.deps.log.warn({ err }, "the workers' heartbeat failed");
    } finally {
      this.ticking = false;
    }
  }

  /**
   * Workers with no heartbeat for the lost delay (on any server): marked lost once, their agents
   * interrupted. A revoked worker too: its token no longer lets it back, so its agents would
   * otherwise stay `running` for good.
   */
  private async findLost(now: number): Promise<void> {
    const lost = await this.deps.store.tx((tx) =>
      tx
        .update(this.t)
        .set({ lostAt: now })
        // a revoked worker too: it was cut off, and its running agents must not stay "running"
        .where(and(isNull(this.t.lostAt), isNotNull(this.t.heartbeatAt), lt(this.t.heartbeatAt, now - WORKER_LOST_MS)))
        .returning({ name: this.t.name }),
    );
    for (const { name } of lost) {
      if (this.links.has(name)) continue;
      const interrupted: string[] = [];
      for (const h of this.lostHandlers) interrupted.push(...(await h(name).catch((err: unknown) => (this.deps.log.error({ err, worker: name }, "interrupting a lost worker's agents failed"), []))));
      this.deps.log.warn({ worker: name, interrupted: interrupted.length }, "worker lost");
      await this.deps.bus.publish("worker.lost", { name, interrupted });
    }
  }

  private async placeOpened(): Promise<void> {
    for (const h of this.placeHandlers) await h().catch((err: unknown) => this.deps.log.warn({ err }, "placing queued agents failed"));
  }
}

function notFound(name: string): DomainError {
  return new DomainError("WORKER_NOT_FOUND", `No worker "${name}" (yard worker token create --name ${name} registers one)`, { kind: "NOT_FOUND" });
}
