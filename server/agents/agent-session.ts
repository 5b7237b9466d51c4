import { closeSync, existsSync, fstatSync, openSync, readSync } from "node:fs";
import type { AgentStreamEvent, AgentUsage } from "../../shared/agents";
import { isAlive, killGroup, readExitCode } from "./agent-process";
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
  agentId: string;
  session: number;
  pid: number;
  startTime: string | null;
  /** Present while we are the process's parent; after a restart we poll. */
  exited?: Promise<number | null>;
  stdoutPath: string;
  stderrPath: string;
  exitCodePath: string;
  signalPath: string;
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
   * A rate limit the CLI is retrying by itself: return true to end the run now (it counts as
   * rate limited), e.g. when another account can take over.
   */
  onRetryingRateLimit?(limit: { message: string }): boolean;
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

  constructor(private readonly opts: SessionOptions) {
    this.tailer = new JsonlTailer({
      path: opts.stdoutPath,
      offset: opts.offset,
      pollMs: Math.min(opts.pollMs, 200),
      onLines: (lines, endOffset) => this.handleLines(lines, endOffset),
      onError: (err) => opts.onError(err),
    });
  }

  start(): void {
    this.tailer.start();
    this.opts.exited?.then(() => this.end()).catch(() => this.end());
    this.timer = setInterval(() => this.tick(), this.opts.pollMs);
    this.timer.unref();
  }

  get pid(): number {
    return this.opts.pid;
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
          if (this.rateLimit || this.stopped || !this.opts.onRetryingRateLimit?.({ message: e.message })) break;
          this.rateLimit = { message: e.message };
          void this.kill();
          break;
        }
        this.rateLimit = { message: e.message, ...(e.resetsAt ? { resetsAt: e.resetsAt } : {}) };
        break;
      default:
        break;
    }
  }

  private tick(): void {
    if (this.finished || this.ending) return;
    if (!this.opts.exited && !isAlive(this.opts.pid, this.opts.startTime)) {
      void this.end();
      return;
    }
    const now = Date.now();
    if (this.resultSeenAt === null && existsSync(this.opts.signalPath)) this.resultSeenAt = now;
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
    await killGroup(this.opts.pid, this.opts.startTime);
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
    await this.tailer.stop();
  }

  private end(): Promise<void> {
    this.ending ??= this.finish();
    return this.ending;
  }

  private async finish(): Promise<void> {
    if (this.detached) return;
    clearInterval(this.timer);
    // wait until the wrapper recorded the exit (it writes the file right after the CLI exits)
    const deadline = Date.now() + 2000;
    while (readExitCode(this.opts.exitCodePath) === null && isAlive(this.opts.pid, this.opts.startTime) && Date.now() < deadline) {
      await new Promise((r) => setTimeout(r, 25));
    }
    try {
      await this.tailer.flush({ final: true });
    } catch (err) {
      this.opts.onError(err as Error);
    }
    await this.tailer.stop();
    if (this.detached) return;
    this.finished = true;
    const exitCode = readExitCode(this.opts.exitCodePath) ?? (this.opts.exited ? await this.opts.exited : null);
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
      stderrTail: tailOf(this.opts.stderrPath, 600),
      stopped: this.stopped,
    });
  }
}

function tailOf(path: string, bytes: number): string {
  // only the end of the file is read: stderr of a long run can be large
  let fd: number | undefined;
  try {
    fd = openSync(path, "r");
    const size = fstatSync(fd).size;
    const start = Math.max(0, size - bytes);
    const buf = Buffer.alloc(size - start);
    readSync(fd, buf, 0, buf.length, start);
    return buf.toString("utf8").trim();
  } catch {
    return "";
  } finally {
    if (fd !== undefined) closeSync(fd);
  }
}
