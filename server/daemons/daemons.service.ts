import { rmSync } from "node:fs";
import { isAbsolute, join, resolve } from "node:path";
import { desc, eq } from "drizzle-orm";
import type { z } from "zod";
import { SpawnDaemonInput, type DaemonSummary, type QueuedDaemonEvent } from "../../shared/daemons";
import type { Cluster } from "../cluster/cluster.service";
import { first, type Store, type TxDb } from "../db/store";
import { DomainError } from "../errors";
import { uuidv7 } from "../lib/uuidv7";
import type { EventBus } from "../events/bus";
import type { Logger } from "../log";
import type { DaemonSnapshotView } from "../../shared/daemons";
import { clip, DaemonRuntime, type DaemonToolsFactory, type RuntimeDeps } from "./daemon-runtime";
import type { daemons } from "./daemons.sql";
import { readDaemonRoot, SNAPSHOT_FILE, type DaemonMeta } from "./persist";
import { createDaemonQueueStorage, type DaemonQueueStorage } from "./queue-store";
import { allowedPath } from "./roots";

export type DaemonsDeps = {
  store: Store;
  bus: EventBus;
  log: Logger;
  /** `config.home`: default roots live in `<home>/daemons/<id>`. */
  home: string;
  /** `config.allowedRoots`: other directories a daemon root or watch path may be in. */
  allowedRoots: readonly string[];
  /** "provider/model" to a language model (throws MODEL_UNAVAILABLE); e.g. `(m) => models.resolve(m)`. */
  resolveModel: RuntimeDeps["resolveModel"];
  buildTools?: DaemonToolsFactory;
  /** How long stop() waits for an idle boundary before aborting the turn (default 500 ms). */
  stopGraceMs?: number;
  /** The servers of the database: daemon ownership (leases), commands to the owner (absent: this server owns every daemon). */
  cluster?: Cluster;
};

type DaemonRow = typeof daemons.$inferSelect;
type ParsedSpawnInput = z.output<typeof SpawnDaemonInput>;

const notFound = (id: string) => new DomainError("DAEMON_NOT_FOUND", `Daemon not found: ${id}`, { kind: "NOT_FOUND", details: { daemonId: id } });

/**
 * Daemon agents: long-lived agents with a durable FIFO trigger queue (Harn's daemon semantics).
 * A trigger is acknowledged only once it is committed to `daemon_queue`; events are handed to
 * the agent one at a time at idle boundaries; an in-flight event survives stop, resume and crash.
 */
export class DaemonsService {
  private readonly runtimes = new Map<string, DaemonRuntime>();
  /** Roots a spawn or resume is starting a daemon on: one at a time per root (its checks, then its runtime). */
  private readonly starting = new Map<string, Promise<unknown>>();
  private readonly queue: DaemonQueueStorage;
  private readonly runtimeDeps: RuntimeDeps;
  private closing = false;
  private recovering: Promise<{ resumed: string[]; failed: string[] }> | undefined;

  constructor(private readonly deps: DaemonsDeps) {
    this.queue = createDaemonQueueStorage(deps.store);
    this.runtimeDeps = {
      bus: deps.bus,
      queue: this.queue,
      log: deps.log,
      resolveModel: deps.resolveModel,
      buildTools: deps.buildTools,
      stopGraceMs: deps.stopGraceMs ?? 500,
      onStatus: (d) => this.saveRow(d),
      fence: (id) => deps.cluster?.leases.fenceOf("daemon", id),
    };
    if (deps.cluster) this.serveCommands(deps.cluster);
  }

  /** What other servers ask of the daemons this server owns; what it does when it lost one. */
  private serveCommands(cluster: Cluster): void {
    type P = { id: string; payload?: unknown };
    cluster.commands.handle("daemon.trigger", (p) => this.trigger((p as P).id, (p as P).payload));
    cluster.commands.handle("daemon.stop", (p) => this.stop((p as P).id));
    cluster.commands.handle("daemon.snapshot", (p) => this.snapshot((p as P).id));
    cluster.onLost("daemon", (id) => {
      const daemon = this.runtimes.get(id);
      this.runtimes.delete(id);
      // another server took it over (and replays its queue): stop the loop here
      if (daemon?.status === "running") void daemon.stop({ keepRunning: true }).catch(() => {});
    });
    cluster.onScan(async () => {
      const recovered = await this.recover();
      if (recovered.resumed.length + recovered.failed.length > 0) this.deps.log.info(recovered, "daemons taken over from a lost server");
    });
  }

  /** The server owning a daemon that does not run here, if any (its commands go there). */
  private async remoteOwner(id: string): Promise<string | undefined> {
    if (this.runtimes.get(id)?.status === "running") return undefined;
    return this.deps.cluster?.leases.remoteOwner("daemon", id);
  }

  runningCount(): number {
    let n = 0;
    for (const d of this.runtimes.values()) if (d.status === "running") n++;
    return n;
  }

  async spawn(raw: SpawnDaemonInput): Promise<DaemonSummary> {
    const input = SpawnDaemonInput.parse(raw);
    const id = `daemon_${uuidv7()}`;
    const root = this.allowedPath(input.persistPath ?? join(this.deps.home, "daemons", id), "persistPath");
    const watchPaths = (input.watchPaths ?? []).map((p, i) => this.allowedPath(isAbsolute(p) ? p : resolve(root, p), `watchPaths.${i}`));
    return this.onRoot(root, () => this.spawnOn(root, id, input, watchPaths));
  }

  private async spawnOn(root: string, id: string, input: ParsedSpawnInput, watchPaths: string[]): Promise<DaemonSummary> {
    this.assertRootFree(root);
    this.deps.resolveModel(input.model);
    await this.deps.cluster?.leases.acquire("daemon", id);
    const meta: DaemonMeta = {
      _type: "daemon_meta",
      id,
      name: input.name ?? id,
      prompt: (input.task ?? input.prompt)!,
      system: input.system ?? null,
      session_id: input.sessionId ?? id,
      options: {
        model: input.model,
        tools: input.tools,
        max_iterations: input.maxIterations,
        wake_interval_ms: input.wakeIntervalMs,
        watch_paths: watchPaths.length > 0 ? watchPaths : undefined,
        idle_watchdog_attempts: input.idleWatchdogAttempts,
        triggers: input.triggers,
      },
      event_queue_capacity: input.eventQueueCapacity,
      next_event_seq: 0,
      pending_events: [],
      inflight_event: null,
    };
    const daemon = new DaemonRuntime(meta, undefined, [], root, this.runtimeDeps);
    try {
      daemon.persist();
    } catch (err) {
      throw new DomainError("DAEMON_PERSIST_FAILED", `Cannot write the daemon's state to ${root}: ${(err as Error).message}`, { kind: "BAD_REQUEST", details: { root } });
    }
    // the row is written with its event (one transaction): neither exists without the other
    try {
      await this.deps.bus.publish(
        "daemon.spawned",
        { summary: clip(`spawned ${meta.name} on ${input.model}: ${meta.prompt}`), name: meta.name, persistPath: root, model: input.model },
        { daemonId: id },
        { write: (tx) => this.upsertRow(tx, daemon) },
      );
    } catch (err) {
      if (this.isDefaultRoot(root, id)) rmSync(root, { recursive: true, force: true });
      throw err;
    }
    this.runtimes.set(id, daemon);
    await daemon.start("spawn");
    return daemon.summary();
  }

  /**
   * The one resolver of daemon references: the id of the daemon with this id, else with this
   * name (several named alike: the one running, else DAEMON_NAME_AMBIGUOUS). Unknown:
   * DAEMON_NOT_FOUND, or with `lenient` the reference itself (event filters: events outlive daemons).
   */
  async resolveId(idOrName: string, opts: { lenient?: boolean } = {}): Promise<string> {
    if (this.runtimes.has(idOrName) || (await this.row(idOrName))) return idOrName;
    const { daemons } = this.deps.store.t;
    const named = await this.deps.store.read.select({ id: daemons.id, status: daemons.status }).from(daemons).where(eq(daemons.name, idOrName)).orderBy(desc(daemons.createdAt));
    if (named.length === 1) return named[0]!.id;
    const running = named.filter((d) => d.status === "running");
    if (running.length === 1) return running[0]!.id;
    if (named.length > 1) {
      const ids = named.map((d) => d.id);
      throw new DomainError("DAEMON_NAME_AMBIGUOUS", `${ids.length} daemons are named "${idOrName}" (${ids.join(", ")}): give its id`, { kind: "CONFLICT", details: { name: idOrName, ids } });
    }
    if (opts.lenient) return idOrName;
    throw notFound(idOrName);
  }

  /** Queue a trigger (by daemon id or name); resolves with its seq once the entry is committed to the database. */
  async trigger(idOrName: string, payload: unknown): Promise<{ seq: number }> {
    // the hot path: a daemon running here, by id, is found without a query
    const id = this.runtimes.has(idOrName) ? idOrName : await this.resolveId(idOrName);
    const daemon = this.runtimes.get(id);
    if (!daemon) {
      const owner = await this.remoteOwner(id);
      if (owner) return this.deps.cluster!.commands.send(owner, "daemon.trigger", { id, payload: payload ?? null });
      const row = await this.row(id);
      throw row ? this.notRunning(id, row.status) : notFound(id);
    }
    if (daemon.status !== "running" || this.closing) throw this.notRunning(id, daemon.status);
    if (!daemon.meta.options.triggers) throw new DomainError("DAEMON_TRIGGERS_DISABLED", `Daemon '${id}' was spawned with triggers: false`, { kind: "BAD_REQUEST" });
    const capacity = daemon.meta.event_queue_capacity;
    if (daemon.load >= capacity) {
      throw new DomainError("DAEMON_QUEUE_FULL", `Daemon queue full: daemon '${id}' reached its event_queue_capacity of ${capacity}`, {
        kind: "TOO_MANY_REQUESTS",
        details: { daemonId: id, capacity },
      });
    }
    const event: QueuedDaemonEvent = { seq: daemon.meta.next_event_seq++, enqueued_at: new Date().toISOString(), payload: payload ?? null };
    daemon.reserved++;
    try {
      await this.queue.insert({ daemonId: id, seq: event.seq, enqueuedAt: event.enqueued_at, payloadJson: JSON.stringify(event.payload) });
    } finally {
      daemon.reserved--;
    }
    daemon.accept(event);
    // the trigger is acknowledged once durable (above); its event follows on the next group
    // commit without holding up the answer, and a bus failure past this point is logged
    void this.deps.bus
      .publish(
        "daemon.triggered",
        { summary: clip(`#${event.seq}: ${typeof payload === "string" ? payload : JSON.stringify(payload ?? null)}`), seq: event.seq, pendingEventCount: daemon.pending.length },
        { daemonId: id },
      )
      .catch((err: unknown) => this.deps.log.warn({ daemonId: id, seq: event.seq, err: (err as Error).message }, "daemon.triggered not published"));
    return { seq: event.seq };
  }

  /** The persisted snapshot plus live queue data. */
  async snapshot(idOrName: string): Promise<DaemonSnapshotView> {
    const id = await this.resolveId(idOrName);
    const daemon = this.runtimes.get(id);
    if (daemon) return daemon.snapshotView();
    const owner = await this.remoteOwner(id);
    if (owner) return this.deps.cluster!.commands.send(owner, "daemon.snapshot", { id });
    const row = await this.row(id);
    if (!row) throw notFound(id);
    const { meta, snapshot } = readDaemonRoot(row.persistPath);
    const { loop_status: _ignored, ...file } = snapshot;
    return {
      ...file,
      ...(await this.rowSummary(row)),
      pending_events: meta.pending_events,
      pending_event_count: meta.pending_events.length,
      inflight_event: meta.inflight_event,
      queued_event_count: meta.pending_events.length + (meta.inflight_event ? 1 : 0),
      event_queue_capacity: meta.event_queue_capacity,
      total_iterations: snapshot.total_iterations,
      saved_at: snapshot.saved_at,
    };
  }

  /** Stop at an idle boundary (waiting about 500 ms); an in-flight event goes back to the front. */
  async stop(idOrName: string): Promise<DaemonSummary> {
    const id = await this.resolveId(idOrName);
    const daemon = this.runtimes.get(id);
    if (!daemon) {
      const owner = await this.remoteOwner(id);
      if (owner) return this.deps.cluster!.commands.send(owner, "daemon.stop", { id });
      const row = await this.row(id);
      if (!row) throw notFound(id);
      return this.rowSummary(row);
    }
    if (daemon.status !== "running") return daemon.summary();
    const requeued = await daemon.stop();
    await this.deps.bus.publish(
      "daemon.stopped",
      { summary: clip(`stopped with ${daemon.pending.length} pending${requeued !== undefined ? `, #${requeued} re-queued` : ""}`), status: daemon.status, ...(requeued !== undefined ? { requeuedSeq: requeued } : {}) },
      { daemonId: id },
    );
    return daemon.summary();
  }

  /** Resume from a daemon id (or name) or its root directory; queued and in-flight events replay first. */
  async resume(raw: { id?: string; path?: string }): Promise<DaemonSummary> {
    // with a path, the id only checks the root's daemon: it need not be known here
    const ref = raw.id ? { ...raw, id: await this.resolveId(raw.id, { lenient: raw.path !== undefined }) } : raw;
    const root = ref.path ? this.allowedPath(ref.path, "path") : (await this.rowOrThrow(ref.id!)).persistPath;
    return this.onRoot(root, () => this.resumeOn(root, ref.id));
  }

  private async resumeOn(root: string, id: string | undefined): Promise<DaemonSummary> {
    const running = this.runningOn(root);
    if (running) return running.summary();
    const { meta, snapshot } = readDaemonRoot(root);
    const cluster = this.deps.cluster;
    if (cluster && (await cluster.leases.acquire("daemon", meta.id)) === undefined) {
      // it runs on another server of the database: that one's summary
      return this.deps.cluster!.commands.send(await this.remoteOwnerOrThrow(meta.id), "daemon.snapshot", { id: meta.id });
    }
    // triggers acknowledged in this turn are committed before the queue is read back
    await this.queue.flush();
    if (id && meta.id !== id) {
      throw new DomainError("RESTORE_FAILED", `Cannot resume the daemon in ${root}: it holds daemon ${meta.id}, not ${id}`, { details: { root, reason: "id mismatch" } });
    }
    const { pending, maxSeq } = await this.restoreQueue(meta);
    meta.next_event_seq = Math.max(meta.next_event_seq, (maxSeq ?? -1) + 1);
    const daemon = new DaemonRuntime(meta, snapshot, pending, root, this.runtimeDeps);
    // the row (inserted, or updated when known) is written with its event
    await this.deps.bus.publish(
      "daemon.resumed",
      { summary: clip(`resumed ${meta.name} with ${pending.length} pending`), pendingEventCount: pending.length, ...(pending[0] ? { replayedSeq: pending[0].seq } : {}) },
      { daemonId: meta.id },
      { write: (tx) => this.upsertRow(tx, daemon) },
    );
    this.runtimes.set(meta.id, daemon);
    await daemon.start("resume");
    return daemon.summary();
  }

  async list(): Promise<DaemonSummary[]> {
    const { daemons } = this.deps.store.t;
    const rows = await this.deps.store.read.select().from(daemons).orderBy(desc(daemons.createdAt));
    return Promise.all(rows.map((row) => this.runtimes.get(row.id)?.summary() ?? this.rowSummary(row)));
  }

  /** Stop (if running) and forget a daemon; a default root under `<home>/daemons` is removed too. */
  async delete(idOrName: string): Promise<{ deleted: true }> {
    const id = await this.resolveId(idOrName);
    const row = await this.row(id);
    const daemon = this.runtimes.get(id);
    if (!row && !daemon) throw notFound(id);
    if (daemon?.status === "running") await this.stop(id);
    this.runtimes.delete(id);
    const { daemons, daemonQueue } = this.deps.store.t;
    await this.deps.store.tx(async (tx) => {
      await tx.delete(daemonQueue).where(eq(daemonQueue.daemonId, id));
      await tx.delete(daemons).where(eq(daemons.id, id));
    });
    const root = row?.persistPath ?? daemon?.root;
    if (root && this.isDefaultRoot(root, id)) rmSync(root, { recursive: true, force: true });
    return { deleted: true };
  }

  /** At server start: daemons that were running resume by themselves, in-flight events first. */
  recover(): Promise<{ resumed: string[]; failed: string[] }> {
    this.recovering ??= this.recoverOnce().finally(() => (this.recovering = undefined));
    return this.recovering;
  }

  /**
   * The running daemons this server can own (no lease, an expired one, or its own from before a
   * restart): at start, and on a shared database at every heartbeat (a lost server's daemons).
   */
  private async recoverOnce(): Promise<{ resumed: string[]; failed: string[] }> {
    const { daemons } = this.deps.store.t;
    const rows = await this.deps.store.read.select().from(daemons).where(eq(daemons.status, "running"));
    const resumed: string[] = [];
    const failed: string[] = [];
    for (const row of rows) {
      if (this.closing || this.runtimes.get(row.id)?.status === "running") continue;
      if (this.deps.cluster && (await this.deps.cluster.leases.acquire("daemon", row.id, { skipHeld: true })) === undefined) continue;
      try {
        await this.resume({ id: row.id });
        resumed.push(row.id);
      } catch (err) {
        failed.push(row.id);
        const message = err instanceof Error ? err.message : String(err);
        await this.deps.store.tx((tx) => tx.update(daemons).set({ status: "failed", loopStatus: "failed", error: message, updatedAt: Date.now() }).where(eq(daemons.id, row.id)));
        this.deps.log.warn({ daemonId: row.id, err: message }, "daemon could not be resumed");
        await this.deps.bus.publish("daemon.failed", { summary: clip(`resume failed: ${message}`), code: (err as { code?: string }).code ?? "RESTORE_FAILED", message }, { daemonId: row.id }).catch(() => {});
      }
    }
    return { resumed, failed };
  }

  /** Server shutdown: every daemon stops at an idle boundary but stays "running" for recover(). */
  async shutdown(): Promise<void> {
    this.closing = true;
    await this.queue.flush();
    await Promise.all([...this.runtimes.values()].filter((d) => d.status === "running").map((d) => d.stop({ keepRunning: true })));
    // an ended daemon's last root files may still be on their way to disk
    await Promise.all([...this.runtimes.values()].map((d) => d.filesWritten()));
  }

  /**
   * Queue entries to replay: the meta file's and the table's (the table wins), done ones dropped:
   * the meta file's entries go into the table where it does not hold them, in-flight ones back to
   * pending, then the table's open entries are the queue.
   */
  private async restoreQueue(meta: DaemonMeta): Promise<{ pending: QueuedDaemonEvent[]; maxSeq: number | undefined }> {
    const listed = [...(meta.inflight_event ? [meta.inflight_event] : []), ...meta.pending_events];
    const { open, maxSeq } = await this.queue.recover(meta.id, listed);
    return { pending: open.map((e) => ({ seq: e.seq, enqueued_at: e.enqueuedAt, payload: e.payload })), maxSeq };
  }

  /** Start on `root` once no other spawn or resume is starting a daemon there. */
  private async onRoot<T>(root: string, start: () => Promise<T>): Promise<T> {
    for (let other = this.starting.get(root); other; other = this.starting.get(root)) await other.catch(() => {});
    const started = start();
    this.starting.set(root, started);
    try {
      return await started;
    } finally {
      this.starting.delete(root);
    }
  }

  private isDefaultRoot(root: string, id: string): boolean {
    return resolve(root) === resolve(this.deps.home, "daemons", id);
  }

  private allowedPath(path: string, field: string): string {
    return allowedPath(path, field, [this.deps.home, ...this.deps.allowedRoots]);
  }

  private runningOn(root: string): DaemonRuntime | undefined {
    for (const d of this.runtimes.values()) if (d.status === "running" && d.root === root) return d;
    return undefined;
  }

  private assertRootFree(root: string): void {
    const running = this.runningOn(root);
    if (!running) return;
    throw new DomainError("DAEMON_ALREADY_RUNNING", `Daemon '${running.id}' is already running on ${root}; stop it first or use another persistPath`, {
      kind: "CONFLICT",
      details: { daemonId: running.id, root },
    });
  }

  private notRunning(id: string, status: string): DomainError<"DAEMON_NOT_RUNNING"> {
    return new DomainError("DAEMON_NOT_RUNNING", `Daemon '${id}' is ${status}, not running: resume it first`, { kind: "CONFLICT", details: { daemonId: id, status } });
  }

  private row(id: string): Promise<DaemonRow | undefined> {
    const { daemons } = this.deps.store.t;
    return first(this.deps.store.read.select().from(daemons).where(eq(daemons.id, id)));
  }

  private async rowOrThrow(id: string): Promise<DaemonRow> {
    const row = await this.row(id);
    if (!row) throw notFound(id);
    return row;
  }

  private async rowSummary(row: DaemonRow): Promise<DaemonSummary> {
    const queued = (await this.queue.open(row.id)).length;
    return {
      id: row.id,
      name: row.name,
      status: row.status,
      ...(row.loopStatus ? { loop_status: row.loopStatus } : {}),
      session_id: row.id,
      model: row.model,
      persist_path: row.persistPath,
      snapshot_path: join(row.persistPath, SNAPSHOT_FILE),
      pending_event_count: queued,
      queued_event_count: queued,
      event_queue_capacity: 0,
      total_iterations: 0,
      ...(row.error ? { error: row.error } : {}),
    };
  }

  /** The daemon's row: inserted, or (a daemon known here before) its status, error and root updated. */
  private async upsertRow(tx: TxDb, d: DaemonRuntime): Promise<void> {
    const { daemons } = this.deps.store.t;
    await this.deps.cluster?.leases.fence(tx, "daemon", d.id);
    const now = Date.now();
    const set = { status: d.status, loopStatus: d.loopStatus ?? null, error: d.error ?? null, persistPath: d.root, updatedAt: now };
    await tx
      .insert(daemons)
      .values({ id: d.id, name: d.meta.name, model: d.meta.options.model, createdAt: now, ...set })
      .onConflictDoUpdate({ target: daemons.id, set });
  }

  private async saveRow(d: DaemonRuntime): Promise<void> {
    const { daemons } = this.deps.store.t;
    const set = { status: d.status, loopStatus: d.loopStatus ?? null, error: d.error ?? null, persistPath: d.root, updatedAt: Date.now() };
    await this.deps.store.tx(async (tx) => {
      await this.deps.cluster?.leases.fence(tx, "daemon", d.id);
      await tx.update(daemons).set(set).where(eq(daemons.id, d.id));
    });
    // it ended here: another server may resume it later
    if (d.status !== "running" && !this.closing) await this.deps.cluster?.leases.release("daemon", d.id);
  }

  private async remoteOwnerOrThrow(id: string): Promise<string> {
    const owner = await this.deps.cluster?.leases.remoteOwner("daemon", id);
    if (!owner) throw new DomainError("DAEMON_ALREADY_RUNNING", `Daemon '${id}' is being taken over by another server; try again`, { kind: "CONFLICT", details: { daemonId: id } });
    return owner;
  }
}
