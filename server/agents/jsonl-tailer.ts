import { watch, type FSWatcher } from "node:fs";
import { open, type FileHandle } from "node:fs/promises";
import { dirname, basename } from "node:path";

/** Where the bytes come from when not a local file: a read at an offset (empty at the end) and the size then. */
export interface ByteSource {
  read(position: number, maxBytes: number): Promise<{ data: Buffer; size: number }>;
}

export interface TailerOptions {
  /** The file may not exist yet: the tailer waits for it. Watched for changes when given. */
  path?: string;
  /** Reads through this instead of opening `path` (e.g. an agent host's output); polled. */
  source?: ByteSource;
  /** Byte offset to start at (a line boundary); default 0. */
  offset?: number;
  /** Polling fallback interval; default 200 ms. */
  pollMs?: number;
  /** Complete lines (no "\n", a trailing "\r" removed) and the offset just after the last one. Awaited. */
  onLines(lines: string[], endOffset: number): void | Promise<void>;
  onError?(err: Error): void;
}

const READ_SIZE = 1 << 20;
const MAX_DELIVERY = 4 << 20;
const NEWLINE = 0x0a;

/**
 * Follows a growing JSONL file: fs.watch for low latency, polling as the fallback; partial lines
 * are kept as a list of buffers (a 50 MB line costs one concatenation), decoded only once
 * complete; one read at a time, and no read until the previous lines were handled.
 */
export class JsonlTailer {
  private position: number;
  private delivered: number;
  private partial: Buffer[] = [];
  private partialBytes = 0;
  private handle: FileHandle | undefined;
  private watcher: FSWatcher | undefined;
  private timer: NodeJS.Timeout | undefined;
  /** Every read (watch, poll, flush) runs on this one chain: never two reads at once. */
  private chain: Promise<void> = Promise.resolve();
  /** A watch/poll read is queued and has not started yet: further kicks add nothing. */
  private queued = false;
  private stopped = false;
  /** One read buffer per tailer, reused (lines are copied out when decoded). */
  private buf: Buffer | undefined;
  private polls = 0;

  constructor(private readonly opts: TailerOptions) {
    this.position = opts.offset ?? 0;
    this.delivered = this.position;
  }

  get offset(): number {
    return this.delivered;
  }

  start(): void {
    if (this.opts.path) this.watchFile();
    this.timer = setInterval(() => this.poll(), this.opts.pollMs ?? 200);
    this.timer.unref();
    this.kick();
  }

  private watchFile(): void {
    const path = this.opts.path;
    if (!path) return;
    try {
      this.watcher = watch(path, { persistent: false }, () => this.kick());
      this.watcher.on("error", () => this.unwatch());
    } catch {
      // not there yet: watch the directory for its creation
      try {
        const name = basename(path);
        this.watcher = watch(dirname(path), { persistent: false }, (_e, file) => {
          if (file !== null && String(file) !== name) return;
          this.unwatch();
          this.watchFile();
          this.kick();
        });
        this.watcher.on("error", () => this.unwatch());
      } catch {
        // the poll timer covers it
      }
    }
  }

  private unwatch(): void {
    this.watcher?.close();
    this.watcher = undefined;
  }

  /** The fallback: with a working fs.watch only every 5th tick reads (and checks for truncation). */
  private poll(): void {
    this.polls++;
    if (!this.watcher || this.polls % 5 === 0) this.kick(true);
  }

  /** The source says it grew (a worker's output notice): read now rather than at the next poll. */
  nudge(): void {
    this.kick();
  }

  /** Queue a read; coalesces with one queued but not yet started. */
  private kick(checkSize = false): void {
    if (this.stopped || this.queued) return;
    this.queued = true;
    this.chain = this.chain
      .then(() => {
        this.queued = false;
        return this.stopped ? undefined : this.readAvailable(false, checkSize);
      })
      .catch((err: Error) => this.opts.onError?.(err));
  }

  /** Read everything up to EOF now (after any read in progress); with `final`, also a last line without "\n". */
  async flush(opts: { final?: boolean } = {}): Promise<void> {
    const run = this.chain.then(() => this.readAvailable(opts.final ?? false));
    this.chain = run.catch(() => undefined);
    await run;
  }

  async stop(): Promise<void> {
    this.stopped = true;
    clearInterval(this.timer);
    this.unwatch();
    await this.chain.catch(() => undefined);
    await this.handle?.close().catch(() => undefined);
    this.handle = undefined;
  }

  private async ensureOpen(): Promise<FileHandle | undefined> {
    if (this.handle) return this.handle;
    if (!this.opts.path) return undefined;
    try {
      this.handle = await open(this.opts.path, "r");
      if (!this.watcher) this.watchFile();
      return this.handle;
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === "ENOENT") return undefined;
      throw err;
    }
  }

  /** Bytes at `position` into `buf` (0 at the end, or while there is nothing to read yet), and the size when asked. */
  private async readAt(position: number, buf: Buffer, withSize: boolean): Promise<{ bytesRead: number; size?: number }> {
    const source = this.opts.source;
    if (source) {
      const { data, size } = await source.read(position, buf.length);
      data.copy(buf, 0, 0, data.length);
      return { bytesRead: data.length, size };
    }
    const handle = await this.ensureOpen();
    if (!handle) return { bytesRead: 0 };
    const size = withSize ? (await handle.stat()).size : undefined;
    const { bytesRead } = await handle.read(buf, 0, buf.length, position);
    return { bytesRead, ...(size !== undefined ? { size } : {}) };
  }

  private async readAvailable(final: boolean, checkSize = true): Promise<void> {
    const buf = (this.buf ??= Buffer.allocUnsafe(READ_SIZE));
    let first = true;
    let lines: string[] = [];
    let pendingBytes = 0;
    for (;;) {
      // read until EOF (no stat per read: a read at EOF returns 0 bytes)
      const { bytesRead, size } = await this.readAt(this.position, buf, first && checkSize);
      if (first && size !== undefined && size < this.position) {
        this.opts.onError?.(new Error(`${this.opts.path ?? "the output"} shrank below the read offset (${size} < ${this.position})`));
        return;
      }
      first = false;
      if (bytesRead === 0) break;
      this.position += bytesRead;
      let start = 0;
      for (let nl = buf.indexOf(NEWLINE, 0); nl !== -1 && nl < bytesRead; nl = buf.indexOf(NEWLINE, start)) {
        const piece = buf.subarray(start, nl);
        let line: Buffer;
        if (this.partialBytes > 0) {
          this.partial.push(piece);
          line = Buffer.concat(this.partial, this.partialBytes + piece.length);
          this.partial = [];
          this.partialBytes = 0;
        } else line = piece;
        lines.push(decodeLine(line));
        pendingBytes += line.length + 1;
        start = nl + 1;
      }
      if (start < bytesRead) {
        this.partial.push(Buffer.from(buf.subarray(start, bytesRead)));
        this.partialBytes += bytesRead - start;
      }
      if (pendingBytes >= MAX_DELIVERY) {
        await this.deliver(lines, pendingBytes);
        lines = [];
        pendingBytes = 0;
        if (this.stopped && !final) return;
      }
    }
    if (final && this.partialBytes > 0) {
      const line = Buffer.concat(this.partial, this.partialBytes);
      lines.push(decodeLine(line));
      pendingBytes += line.length;
      this.partial = [];
      this.partialBytes = 0;
    }
    if (lines.length > 0) await this.deliver(lines, pendingBytes);
  }

  private async deliver(lines: string[], bytes: number): Promise<void> {
    this.delivered += bytes;
    await this.opts.onLines(lines, this.delivered);
  }
}

function decodeLine(b: Buffer): string {
  const end = b.length > 0 && b[b.length - 1] === 0x0d ? b.length - 1 : b.length;
  return b.toString("utf8", 0, end);
}
