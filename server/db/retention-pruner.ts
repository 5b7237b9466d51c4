import type { Config } from "../config";
import type { Logger } from "../log";
import { prune, type PruneReport, type RetentionLimits } from "./retention";
import type { Store } from "./store";

/** The retention a config asks for (SWITCHYARD_RETENTION_*), or undefined: off, nothing is ever deleted. */
export function retentionLimits(config: Pick<Config, "retentionDays" | "retentionMaxEvents" | "retentionMaxOutputMb">): RetentionLimits | undefined {
  const limits: RetentionLimits = {};
  if (config.retentionDays !== undefined) limits.olderThanDays = config.retentionDays;
  if (config.retentionMaxEvents !== undefined) limits.keepEvents = config.retentionMaxEvents;
  if (config.retentionMaxOutputMb !== undefined) limits.maxOutputBytes = Math.round(config.retentionMaxOutputMb * 1024 * 1024);
  return Object.keys(limits).length > 0 ? limits : undefined;
}

export type PrunerOptions = {
  store: Store;
  log: Logger;
  limits: RetentionLimits;
  /** Between passes (default an hour). */
  intervalMs?: number;
  /** From start to the first pass (default a minute: after recovery, off the start's busy moments). */
  firstDelayMs?: number;
};

/**
 * The server's periodic prune: once shortly after start, then every interval, one pass at a time
 * (a pass still running when the next is due lets it go). Each pass logs what it removed. A pass
 * that fails is logged and tried again at the next interval. `stop()` ends a pass under way
 * between two batches and waits for it, before the store closes.
 */
export class RetentionPruner {
  private timer: NodeJS.Timeout | undefined;
  private running: Promise<PruneReport | undefined> | undefined;
  private readonly abort = new AbortController();

  constructor(private readonly opts: PrunerOptions) {}

  start(): void {
    if (this.timer || this.abort.signal.aborted) return;
    const { intervalMs = 3_600_000, firstDelayMs = 60_000 } = this.opts;
    this.opts.log.info({ retention: this.opts.limits, everyMs: intervalMs }, "retention on: old events and agent output are pruned periodically");
    const tick = (delay: number) => {
      this.timer = setTimeout(() => {
        void this.runOnce().finally(() => {
          if (!this.abort.signal.aborted) tick(intervalMs);
        });
      }, delay);
      this.timer.unref();
    };
    tick(firstDelayMs);
  }

  /** One pass now (or the one under way). */
  runOnce(): Promise<PruneReport | undefined> {
    this.running ??= this.pass().finally(() => (this.running = undefined));
    return this.running;
  }

  async stop(): Promise<void> {
    this.abort.abort();
    clearTimeout(this.timer);
    await this.running;
  }

  private async pass(): Promise<PruneReport | undefined> {
    const { log, limits, store } = this.opts;
    const started = Date.now();
    try {
      const report = await prune(store, { ...limits, signal: this.abort.signal });
      const removed = report.events + report.output.chunks > 0;
      const fields = { events: report.events, runs: report.runs, outputAgents: report.output.agents, outputChunks: report.output.chunks, outputBytes: report.output.bytes, complete: report.complete, ms: Date.now() - started };
      if (removed) log.info(fields, "retention: pruned old events and agent output");
      else log.debug(fields, "retention: nothing to prune");
      return report;
    } catch (err) {
      if (this.abort.signal.aborted) return undefined;
      log.warn({ err: { message: (err as Error).message } }, "retention: prune failed; trying again at the next interval");
      return undefined;
    }
  }
}
