import type { AgentStreamEvent, AgentUsage } from "../../shared/agents";
import type { AgentHost, SessionRef } from "./agent-host";
import { JsonlTailer } from "./jsonl-tailer";
import type { LineParser } from "./providers/types";

/** What one process run of an agent produced, handed over once it has ended. */
export interface SessionOutcome {
  exitCode: number | null;
  watchdog: "hung_after_result" | "silent" | null;
  result: { isError: boolean; message: string } | null;
  rateLimit: { message: string; resetsAt?: string } | null;
  lastText: string | null;
  stderrTail: string;
  /** True when stop() ended it. */
  stopped: boolean;
}

export interface SessionOptions {
  /** Where the process runs: every look at it (output, liveness, exit, signal file) goes through the host. */
  host: AgentHost;
  ref: SessionRef;
  /** The workspace, where the agent writes its signal file. */
  workspace: string;
  /** The stdout file when it is on this machine: watched for low latency (the host is polled otherwise). */
  localOutputPath?: string;
  offset: number;
  parser: LineParser;
  resultGraceMs: number;
  silenceMs: number;
  pollMs: number;
  /** Persist and publish parsed lines; awaited before the next read (backpressure). */
  onLines(lines: string[], endOffset: number): Promise<void>;
  onSessionId(sessionId: string): void;
  onUsage(usage: AgentUsage): void;
  onExit(outcome: SessionOutcome): void;
  /**
   * A rate limit the CLI is retrying by itself: return (or resolve with) true to end the run now
   * (it counts as rate limited), e.g. when another account can take over.
   */
  onRetryingRateLimit?(limit: { message: string }): boolean | Promise<boolean>;
  onError(err: Error): void;
}

/**
 * One live process run: tails its stdout into the parser, watches for its end (exit, hang after
 * its result, silence), then flushes the last output and reports the outcome exactly once.
 */
export class AgentSession {
  private readonly tailer: JsonlTailer;
  private result: SessionOutcome["result"] = null;
  private rateLimit: SessionOutcome["rateLimit"] = null;
  private lastText: string | null = null;
  /** The newest line skipped as routine: parsed only if its text is needed (the last words). */
  private lastRoutine: string | null = null;
  private lastOutputAt = Date.now();
  private resultSeenAt: number | null = null;
  private watchdog: SessionOutcome["watchdog"] = null;
  private stopped = false;
  private finished = false;
  private detached = false;
  private timer: NodeJS.Timeout | undefined;
  private ending: Promise<void> | undefined;
  private unnotify: (() => void) | undefined;

  constructor(private readonly opts: SessionOptions) {
    this.tailer = new JsonlTailer({
      ...(opts.localOutputPath ? { path: opts.localOutputPath } : {}),
      source: {
        read: async (position, maxBytes) => {
          const chunk = await opts.host.readOutput(opts.ref, { stream: "stdout", offset: position, maxBytes });
          return { data: Buffer.from(chunk.data, "base64"), size: chunk.size };
        },
      },
      offset: opts.offset,
      pollMs: Math.min(opts.pollMs, 200),
      onLines: (lines, endOffset) => this.handleLines(lines, endOffset),
      onError: (err) => opts.onError(err),
    });
  }

  start(): void {
    this.tailer.start();
    // a worker tells when the output grew: read it at once rather than at the next poll
    this.unnotify = this.opts.host.onOutput?.(this.opts.ref, () => this.tailer.nudge());
    void this.watchExit();
    this.timer = setInterval(() => this.tick(), this.opts.pollMs);
    this.timer.unref();
  }

  /** Long-polls the host until the process ends (at once while this process is its parent). */
  private async watchExit(): Promise<void> {
    while (!this.finished && !this.ending && !this.detached) {
      try {
        const state = await this.opts.host.waitForExit(this.opts.ref, { timeoutMs: 30_000 });
        if (!state.running) break;
      } catch (err) {
        this.opts.onError(err as Error);
        await new Promise((r) => setTimeout(r, this.opts.pollMs));
      }
    }
    if (!this.detached) await this.end();
  }

  get pid(): number {
    return this.opts.ref.pid;
  }

  private async handleLines(lines: string[], endOffset: number): Promise<void> {
    this.lastOutputAt = Date.now();
    const parser = this.opts.parser;
    for (const line of lines) {
      if (line.trim() === "") continue;
      if (parser.isRoutine?.(line)) {
        this.lastRoutine = line;
        continue;
      }
      for (const e of parser.parseLine(line)) this.observe(e);
    }
    await this.opts.onLines(lines, endOffset);
  }

  private observe(e: AgentStreamEvent): void {
    switch (e.kind) {
      case "session":
        this.opts.onSessionId(e.sessionId);
        break;
      case "text":
        this.lastText = e.text;
        this.lastRoutine = null;
        break;
      case "usage":
        this.opts.onUsage(e.usage);
        break;
      case "result":
        this.result = { isError: e.isError, message: e.message };
        this.resultSeenAt ??= Date.now();
        if (e.sessionId) this.opts.onSessionId(e.sessionId);
        break;
      case "rate_limit":
        if (e.retrying) {
          if (this.rateLimit || this.stopped || this.askingToFailOver || !this.opts.onRetryingRateLimit) break;
          this.askingToFailOver = true;
          void Promise.resolve(this.opts.onRetryingRateLimit({ message: e.message }))
            .then((failOver) => {
              // the run may have ended, or hit a final limit, while the answer came
              if (!failOver || this.rateLimit || this.stopped || this.finished || this.ending) return;
              this.rateLimit = { message: e.message };
              void this.kill();
            })
            .catch((err: unknown) => this.opts.onError(err as Error))
            .finally(() => (this.askingToFailOver = false));
          break;
        }
        this.rateLimit = { message: e.message, ...(e.resetsAt ? { resetsAt: e.resetsAt } : {}) };
        break;
      default:
        break;
    }
  }

  private ticking = false;
  /** Asking whether to fail over at a rate limit the CLI retries (one question at a time). */
  private askingToFailOver = false;

  private tick(): void {
    if (this.finished || this.ending || this.ticking) return;
    this.ticking = true;
    void this.check()
      .catch((err: unknown) => this.opts.onError(err as Error))
      .finally(() => (this.ticking = false));
  }

  /** The watchdogs: a process that hangs after its result (or its signal file), or that went silent. */
  private async check(): Promise<void> {
    if (this.resultSeenAt === null && (await this.opts.host.signalWritten(this.opts.workspace))) this.resultSeenAt ??= Date.now();
    if (this.finished || this.ending) return;
    const now = Date.now();
    if (this.resultSeenAt !== null && now - this.resultSeenAt >= this.opts.resultGraceMs) {
      this.watchdog = "hung_after_result";
      void this.kill();
      return;
    }
    if (now - this.lastOutputAt >= this.opts.silenceMs) {
      this.watchdog = "silent";
      void this.kill();
    }
  }

  private async kill(): Promise<void> {
    await this.opts.host.stopSession(this.opts.ref, { graceMs: 3000 });
    await this.end();
  }

  /** Stop the process (a user's stop): the outcome is reported with `stopped: true`. */
  async stop(): Promise<void> {
    this.stopped = true;
    await this.kill();
  }

  /** Server shutdown: stop watching, leave the process running (it is re-attached at start). */
  async detach(): Promise<void> {
    this.detached = true;
    clearInterval(this.timer);
    this.unnotify?.();
    await this.tailer.stop();
  }

  private end(): Promise<void> {
    this.ending ??= this.finish();
    return this.ending;
  }

  private async finish(): Promise<void> {
    if (this.detached) return;
    clearInterval(this.timer);
    this.unnotify?.();
    // wait until the wrapper recorded the exit (it writes the file right after the CLI exits)
    const deadline = Date.now() + 2000;
    let state = await this.state();
    while (state.exitCode === null && state.running && Date.now() < deadline) {
      await new Promise((r) => setTimeout(r, 25));
      state = await this.state();
    }
    try {
      await this.tailer.flush({ final: true });
    } catch (err) {
      this.opts.onError(err as Error);
    }
    await this.tailer.stop();
    if (this.detached) return;
    this.finished = true;
    const exitCode = (await this.state()).exitCode;
    if (this.lastRoutine !== null) {
      const text = this.opts.parser.parseLine(this.lastRoutine).findLast((e) => e.kind === "text");
      if (text?.kind === "text") this.lastText = text.text;
    }
    this.opts.onExit({
      exitCode,
      watchdog: this.watchdog,
      result: this.result,
      rateLimit: this.rateLimit,
      lastText: this.lastText,
      stderrTail: await this.stderrTail(600),
      stopped: this.stopped,
    });
  }

  private state() {
    return this.opts.host.sessionState(this.opts.ref).catch((err: unknown) => {
      this.opts.onError(err as Error);
      return { running: false, exitCode: null };
    });
  }

  /** Only the end of stderr is read: stderr of a long run can be large. */
  private async stderrTail(bytes: number): Promise<string> {
    try {
      const chunk = await this.opts.host.readOutput(this.opts.ref, { stream: "stderr", offset: -bytes, maxBytes: bytes });
      return Buffer.from(chunk.data, "base64").toString("utf8").trim();
    } catch {
      return "";
    }
  }
}
