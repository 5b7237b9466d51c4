import { join } from "node:path";
import type { LanguageModel, ModelMessage } from "ai";
import type { DaemonSnapshot, DaemonSnapshotView, DaemonSummary, DaemonWakeReason, QueuedDaemonEvent } from "../../shared/daemons";
import type { EventPayload } from "../../shared/events";
import type { DaemonLoopStatus, DaemonStatus } from "../../shared/statuses";
import type { EventBus } from "../events/bus";
import type { EventFence } from "../events/event-store";
import type { Logger } from "../log";
import { jsonWithArrays, META_FILE, RootWriter, SNAPSHOT_FILE, writeJsonAtomic, type DaemonMeta, type RootFiles } from "./persist";
import { runDaemonTurn, visibleMessages, type DaemonToolsFactory } from "./daemon-turn";
import type { DaemonQueueStorage } from "./queue-store";
import { changedPaths, scanWatchPaths, type WatchState } from "./watch";

export type { DaemonToolsFactory } from "./daemon-turn";

/** One daemon's loop: idle until a wake, one agent call per wake, a snapshot at every idle boundary. */

export type RuntimeDeps = {
  bus: EventBus;
  queue: DaemonQueueStorage;
  log: Logger;
  resolveModel: (model: string) => { model: LanguageModel };
  buildTools?: DaemonToolsFactory;
  /** Called whenever status or loop status changes (the service updates its row); awaited. */
  onStatus: (daemon: DaemonRuntime) => Promise<void>;
  stopGraceMs: number;
  /** This server's lease on a daemon, when several servers share the store (its events are fenced by it). */
  fence?: (daemonId: string) => EventFence | undefined;
};

type Wake = { reason: DaemonWakeReason; text: string; event?: QueuedDaemonEvent };
type TurnOutcome = { kind: "ok"; end?: DaemonLoopStatus } | { kind: "aborted" };

export const IDLE_BACKOFF_MS = [100, 500, 1000, 2000] as const;
/** A turn whose text holds this marker ends the daemon with status `done`. */
export const DONE_MARKER = "##DONE##";
/** This many empty turns in a row end the daemon with status `stuck`. */
const STUCK_AFTER = 3;

export const clip = (text: string, max = 160): string => (text.length <= max ? text : `${text.slice(0, max - 1)}…`);
const payloadText = (payload: unknown): string => (typeof payload === "string" ? payload : (JSON.stringify(payload) ?? "null"));

export class DaemonRuntime {
  status: DaemonStatus = "stopped";
  loopStatus: DaemonLoopStatus | undefined;
  state: "active" | "idle" = "idle";
  error: string | undefined;
  result: string | undefined;
  savedAt: string | undefined;
  totalIterations: number;
  /** Pending events, FIFO; the in-flight one is not in it. */
  readonly pending: QueuedDaemonEvent[];
  inflight: QueuedDaemonEvent | null = null;
  /** Triggers accepted but not yet committed (they count against the capacity). */
  reserved = 0;
  private messages: ModelMessage[];
  private watchState: WatchState;
  private idleBackoffMs = 0;
  private lastWakeReason: DaemonWakeReason | null = null;
  private emptyTurns = 0;
  private stopRequested = false;
  private turnAbort: AbortController | undefined;
  private turnEnded: (() => void) | undefined;
  private wakeUp: (() => void) | undefined;
  private loopDone: Promise<void> | undefined;
  private readonly writer: RootWriter;

  constructor(
    readonly meta: DaemonMeta,
    snapshot: DaemonSnapshot | undefined,
    pending: QueuedDaemonEvent[],
    readonly root: string,
    private readonly deps: RuntimeDeps,
  ) {
    this.pending = pending;
    this.messages = (snapshot?.recorded_messages ?? []) as ModelMessage[];
    this.totalIterations = snapshot?.total_iterations ?? 0;
    this.watchState = snapshot?.watch_state ?? scanWatchPaths(this.watchPaths);
    this.savedAt = snapshot?.saved_at;
    this.writer = new RootWriter((err) => this.deps.log.error({ daemonId: this.id, err: (err as Error).message }, "daemon root files not written"));
  }

  get id(): string {
    return this.meta.id;
  }

  private get watchPaths(): string[] {
    return this.meta.options.watch_paths ?? [];
  }

  /** Pending plus in-flight plus not yet committed: what the capacity bounds. */
  get load(): number {
    return this.pending.length + (this.inflight ? 1 : 0) + this.reserved;
  }

  summary(): DaemonSummary {
    return {
      id: this.id,
      name: this.meta.name,
      status: this.status,
      ...(this.loopStatus ? { loop_status: this.loopStatus } : {}),
      daemon_state: this.state,
      session_id: this.meta.session_id,
      model: this.meta.options.model,
      persist_path: this.root,
      snapshot_path: join(this.root, SNAPSHOT_FILE),
      pending_event_count: this.pending.length,
      queued_event_count: this.pending.length + (this.inflight ? 1 : 0),
      event_queue_capacity: this.meta.event_queue_capacity,
      total_iterations: this.totalIterations,
      inflight_event: this.inflight,
      ...(this.error ? { error: this.error } : {}),
      ...(this.result !== undefined ? { result: this.result } : {}),
      ...(this.savedAt ? { saved_at: this.savedAt } : {}),
    };
  }

  /** The persisted snapshot plus live queue data. */
  snapshotView(): DaemonSnapshotView {
    const { loop_status: _ignored, ...file } = this.snapshotFile(this.savedAt ?? new Date().toISOString());
    return { ...file, ...this.summary(), pending_events: [...this.pending] };
  }

  /** Running from now on; resolves once the row says so (the loop starts then). */
  start(initial: "spawn" | "resume"): Promise<void> {
    this.status = "running";
    this.loopStatus = undefined;
    this.error = undefined;
    this.stopRequested = false;
    this.requeuedSeq = undefined;
    const saved = this.deps.onStatus(this);
    this.loopDone = saved.then(() => this.loop(initial)).catch((err: unknown) => this.fail(err));
    return saved;
  }

  /** Accept a committed trigger: appended at the back, the loop woken. */
  accept(event: QueuedDaemonEvent): void {
    this.pending.push(event);
    this.wake();
  }

  private wake(): void {
    const w = this.wakeUp;
    this.wakeUp = undefined;
    w?.();
  }

  /**
   * Stop at an idle boundary, waiting up to stopGraceMs; a turn still running then is aborted and
   * its event goes back to the FRONT of the queue. `keepRunning` (server shutdown) leaves the
   * status "running" on disk so recover() resumes the daemon at the next start.
   */
  async stop(options: { keepRunning?: boolean } = {}): Promise<number | undefined> {
    if (this.status !== "running") return undefined;
    this.stopRequested = true;
    this.wake();
    if (this.turnAbort) {
      const ended = new Promise<void>((resolve) => (this.turnEnded = resolve));
      const grace = new Promise<void>((resolve) => setTimeout(resolve, this.deps.stopGraceMs).unref());
      await Promise.race([ended, grace]);
      this.turnAbort?.abort(new Error("daemon stopped"));
    }
    await this.loopDone;
    const requeued = this.requeuedSeq;
    if (this.status !== "running") return requeued;
    if (!options.keepRunning) this.status = "stopped";
    this.state = "idle";
    await this.persistNow();
    if (!options.keepRunning) await this.deps.onStatus(this);
    return requeued;
  }

  private requeuedSeq: number | undefined;

  private async loop(initial: "spawn" | "resume"): Promise<void> {
    let pendingReason: "spawn" | "resume" | undefined = initial;
    let idleTicks = 0;
    let backoff = 0;
    let lastWakeAt = Date.now();
    const { max_iterations: maxIterations, wake_interval_ms: interval, idle_watchdog_attempts: watchdog } = this.meta.options;
    while (!this.stopRequested) {
      if (maxIterations !== undefined && this.totalIterations >= maxIterations) return this.end("budget_exhausted");
      const wake = await this.nextWake(pendingReason, lastWakeAt);
      pendingReason = undefined;
      // a stop that came while the entry was being claimed: it goes back to the front, untouched
      if (this.stopRequested) return this.unclaim();
      if (wake) {
        idleTicks = 0;
        backoff = 0;
        this.idleBackoffMs = 0;
        lastWakeAt = Date.now();
        const outcome = await this.turn(wake);
        if (outcome.kind === "aborted") return;
        await this.idleBoundary();
        if (outcome.end) return this.end(outcome.end);
        continue;
      }
      if (!this.hasWakeSource()) return this.end("idle");
      if (watchdog !== undefined && idleTicks >= watchdog) return this.end("watchdog");
      let delay: number = IDLE_BACKOFF_MS[Math.min(backoff, IDLE_BACKOFF_MS.length - 1)]!;
      if (interval !== undefined) delay = Math.max(0, Math.min(delay, lastWakeAt + interval - Date.now()));
      this.idleBackoffMs = delay;
      const woken = await this.sleep(delay);
      if (woken) continue;
      // a timer that came due is a wake, not an idle tick
      if (interval !== undefined && Date.now() - lastWakeAt >= interval) continue;
      idleTicks++;
      backoff++;
    }
  }

  private hasWakeSource(): boolean {
    const o = this.meta.options;
    return o.triggers || this.pending.length > 0 || this.watchPaths.length > 0 || o.wake_interval_ms !== undefined;
  }

  /** Resolves true when woken (a trigger, stop), false when the delay elapsed. */
  private sleep(ms: number): Promise<boolean> {
    return new Promise<boolean>((resolve) => {
      const timer = setTimeout(() => {
        this.wakeUp = undefined;
        resolve(false);
      }, ms);
      this.wakeUp = () => {
        clearTimeout(timer);
        resolve(true);
      };
    });
  }

  private async nextWake(initial: "spawn" | "resume" | undefined, lastWakeAt: number): Promise<Wake | undefined> {
    if (initial === "spawn") return { reason: "spawn", text: this.meta.prompt };
    const head = this.pending.shift();
    if (head) {
      this.inflight = head;
      if (await this.deps.queue.claim(this.id, head.seq)) {
        return { reason: initial === "resume" ? "resume" : "message", text: payloadText(head.payload), event: head };
      }
      // not this daemon's next entry in the table (another server holds it): left queued, tried again at the next wake
      this.inflight = null;
      this.pending.unshift(head);
      this.deps.log.warn({ daemonId: this.id, seq: head.seq }, "daemon queue entry not claimed; retrying");
      return undefined;
    }
    if (this.watchPaths.length > 0) {
      const now = scanWatchPaths(this.watchPaths);
      const changed = changedPaths(this.watchState, now);
      this.watchState = now;
      if (changed.length > 0) return { reason: "watch", text: `[wake: watch] These paths changed:\n${changed.map((p) => `- ${p}`).join("\n")}` };
    }
    const interval = this.meta.options.wake_interval_ms;
    if (interval !== undefined && Date.now() - lastWakeAt >= interval) {
      return { reason: "timer", text: `[wake: timer] ${interval} ms passed with no other event.` };
    }
    return undefined;
  }

  private async turn(wake: Wake): Promise<TurnOutcome> {
    this.state = "active";
    this.lastWakeReason = wake.reason;
    const before = this.messages.length;
    this.messages.push({ role: "user", content: wake.text });
    const abort = new AbortController();
    this.turnAbort = abort;
    try {
      const text = await this.callModel(abort.signal);
      if (abort.signal.aborted) return this.rollback(before);
      this.totalIterations++;
      this.result = text;
      if (this.inflight) {
        await this.deps.queue.setState(this.id, this.inflight.seq, "done");
        this.inflight = null;
      }
      this.state = "idle";
      await this.publish("daemon.turn_completed", {
        summary: clip(`turn ${this.totalIterations} (${wake.reason}${wake.event ? ` #${wake.event.seq}` : ""}): ${text}`),
        reason: wake.reason,
        ...(wake.event ? { seq: wake.event.seq } : {}),
        iteration: this.totalIterations,
        text: clip(text, 4000),
      });
      this.emptyTurns = text.trim() === "" ? this.emptyTurns + 1 : 0;
      if (text.includes(DONE_MARKER)) return { kind: "ok", end: "done" };
      if (this.emptyTurns >= STUCK_AFTER) return { kind: "ok", end: "stuck" };
      return { kind: "ok" };
    } catch (err) {
      if (abort.signal.aborted) return this.rollback(before);
      await this.rollback(before);
      throw err;
    } finally {
      this.turnAbort = undefined;
      const ended = this.turnEnded;
      this.turnEnded = undefined;
      ended?.();
    }
  }

  /** Undo a turn that did not finish: the snapshot stays pre-trigger, the event goes to the front. */
  private async rollback(before: number): Promise<TurnOutcome> {
    this.messages.length = before;
    this.state = "idle";
    await this.unclaim();
    return { kind: "aborted" };
  }

  /** The in-flight event (if any) back at the front of the queue, pending again. */
  private async unclaim(): Promise<void> {
    const event = this.inflight;
    if (!event) return;
    this.inflight = null;
    this.pending.unshift(event);
    this.requeuedSeq = event.seq;
    await this.deps.queue.setState(this.id, event.seq, "pending");
  }

  private async callModel(signal: AbortSignal): Promise<string> {
    const { text, responseMessages } = await runDaemonTurn(this.deps, this.meta, this.root, visibleMessages(this.messages), signal);
    if (!signal.aborted) this.messages.push(...responseMessages);
    return text;
  }

  private async idleBoundary(): Promise<void> {
    // off the event loop and coalesced: a busy daemon mirrors its newest state, not every one
    this.markBoundary();
    this.writer.schedule(() => this.rootFiles());
    await this.publish("daemon.snapshotted", {
      summary: clip(`snapshot after ${this.totalIterations} turns, ${this.pending.length} pending`),
      savedAt: new Date().toISOString(),
      pendingEventCount: this.pending.length,
    });
  }

  private async end(loopStatus: DaemonLoopStatus): Promise<void> {
    this.loopStatus = loopStatus;
    this.status = "stopped";
    this.state = "idle";
    await this.deps.onStatus(this);
    await this.persistNow().catch((err: unknown) => this.deps.log.error({ daemonId: this.id, err: (err as Error).message }, "daemon root files not written"));
    await this.publish("daemon.stopped", { summary: clip(`loop ended: ${loopStatus}`), status: "stopped", loopStatus });
  }

  private async fail(err: unknown): Promise<void> {
    const message = err instanceof Error ? err.message : String(err);
    this.status = "failed";
    this.loopStatus = "failed";
    this.state = "idle";
    this.error = message;
    try {
      await this.deps.onStatus(this);
    } catch (rowErr) {
      this.deps.log.error({ daemonId: this.id, err: (rowErr as Error).message }, "daemon row not updated");
    }
    try {
      await this.persistNow();
    } catch (persistErr) {
      this.deps.log.error({ daemonId: this.id, err: persistErr }, "daemon snapshot failed");
    }
    const code = (err as { code?: unknown }).code;
    await this.publish("daemon.failed", { summary: clip(`failed: ${message}`), code: typeof code === "string" ? code : "DAEMON_FAILED", message });
  }

  private async publish<T extends "daemon.turn_completed" | "daemon.snapshotted" | "daemon.stopped" | "daemon.failed">(type: T, payload: EventPayload<T>): Promise<void> {
    try {
      const fence = this.deps.fence?.(this.id);
      await this.deps.bus.publish(type, payload, { daemonId: this.id }, fence ? { fence } : undefined);
    } catch (err) {
      this.deps.log.warn({ daemonId: this.id, type, err: (err as Error).message }, "daemon event not published");
    }
  }

  /** The live state (for the API), or as of the last idle boundary (for the root files). */
  private snapshotFile(savedAt: string, asOf: "live" | "boundary" = "live"): DaemonSnapshot {
    const b = asOf === "boundary" ? this.boundary : undefined;
    const recorded = b ? this.messages.slice(0, b.messages) : [...this.messages];
    return {
      _type: "daemon_snapshot",
      saved_at: savedAt,
      daemon_state: b ? "idle" : this.state,
      visible_messages: visibleMessages(recorded),
      recorded_messages: recorded,
      transcript_summary: null,
      total_iterations: b ? b.totalIterations : this.totalIterations,
      idle_backoff_ms: b ? b.idleBackoffMs : this.idleBackoffMs,
      watch_state: b ? b.watchState : this.watchState,
      loop_status: this.loopStatus ?? null,
      last_wake_reason: b ? b.lastWakeReason : this.lastWakeReason,
    };
  }

  /**
   * What the root files record of the transcript: the state at the last idle boundary (O(1) to
   * note; messages only grow, and a rolled-back turn truncates to this length).
   */
  private boundary = { messages: 0, totalIterations: 0, idleBackoffMs: 0, watchState: {} as WatchState, lastWakeReason: null as DaemonWakeReason | null };

  private markBoundary(): void {
    this.boundary = { messages: this.messages.length, totalIterations: this.totalIterations, idleBackoffMs: this.idleBackoffMs, watchState: this.watchState, lastWakeReason: this.lastWakeReason };
  }

  /** Write daemon.meta.json and daemon.json atomically, now (spawn: nothing else writes yet). */
  persist(): void {
    this.markBoundary();
    const { files, written } = this.rootFiles();
    for (const [path, text] of files) writeJsonAtomic(path, text);
    written?.();
  }

  /** Resolves once the root files written in the background are on disk (server shutdown). */
  filesWritten(): Promise<void> {
    return this.writer.settled();
  }

  /** Wait until the root files hold the current state (stop, end, failure). */
  persistNow(): Promise<void> {
    this.markBoundary();
    return this.writer.writeNow(() => this.rootFiles());
  }

  /** JSON of queued events and transcript messages, made once each (see jsonWithArrays). */
  private readonly jsonCache = new WeakMap<object, string>();

  /**
   * The two root files, taken when a write starts: the queue as it is then (consistent with
   * SQLite), the transcript as of the last idle boundary (never half a turn). Once they are on
   * disk, the queue rows done before this state are pruned: never earlier, or a resume from a
   * meta file still listing them as pending would deliver them again.
   */
  private rootFiles(): RootFiles {
    const savedAt = new Date().toISOString();
    const { pending_events: _stale, ...meta } = this.meta;
    const { visible_messages: visible, recorded_messages: recorded, ...snapshot } = this.snapshotFile(savedAt, "boundary");
    const files: Array<[string, string]> = [
      [join(this.root, META_FILE), jsonWithArrays({ ...meta, inflight_event: this.inflight }, { pending_events: this.pending }, this.jsonCache)],
      [join(this.root, SNAPSHOT_FILE), jsonWithArrays(snapshot, { visible_messages: visible as object[], recorded_messages: recorded as object[] }, this.jsonCache)],
    ];
    this.savedAt = savedAt;
    const open = [this.inflight?.seq, this.pending[0]?.seq].filter((s): s is number => s !== undefined);
    const doneBelow = open.length > 0 ? Math.min(...open) : this.meta.next_event_seq;
    return {
      files,
      written: () => {
        const notPruned = (err: unknown) => this.deps.log.warn({ daemonId: this.id, err: (err as Error).message }, "daemon queue not pruned");
        try {
          const pruned = this.deps.queue.pruneDone(this.id, doneBelow);
          if (pruned instanceof Promise) pruned.catch(notPruned);
        } catch (err) {
          notPruned(err);
        }
      },
    };
  }
}
