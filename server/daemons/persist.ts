import { closeSync, fsyncSync, mkdirSync, openSync, readFileSync, renameSync, writeSync } from "node:fs";
import { mkdir, open, rename } from "node:fs/promises";
import { dirname, join } from "node:path";
import { z } from "zod";
import { DaemonSnapshot, QueuedDaemonEvent } from "../../shared/daemons";
import { DomainError } from "../errors";

/** The daemon's root directory on disk, in the reference's snake_case layout. */

export const META_FILE = "daemon.meta.json";
export const SNAPSHOT_FILE = "daemon.json";

export const DaemonOptions = z.object({
  model: z.string(),
  tools: z.array(z.string()).optional(),
  max_iterations: z.number().int().positive().optional(),
  wake_interval_ms: z.number().int().positive().optional(),
  watch_paths: z.array(z.string()).optional(),
  idle_watchdog_attempts: z.number().int().positive().optional(),
  triggers: z.boolean().default(true),
});
export type DaemonOptions = z.infer<typeof DaemonOptions>;

export const DaemonMeta = z.object({
  _type: z.literal("daemon_meta"),
  id: z.string().regex(/^daemon_/),
  name: z.string(),
  prompt: z.string(),
  system: z.string().nullable(),
  session_id: z.string(),
  options: DaemonOptions,
  event_queue_capacity: z.number().int().positive(),
  next_event_seq: z.number().int().nonnegative(),
  pending_events: z.array(QueuedDaemonEvent),
  inflight_event: QueuedDaemonEvent.nullable(),
});
export type DaemonMeta = z.infer<typeof DaemonMeta>;


/** Write JSON text atomically: a temp file beside the target, fsync, rename, fsync the directory. */
export function writeJsonAtomic(path: string, text: string): void {
  const dir = dirname(path);
  mkdirSync(dir, { recursive: true });
  const tmp = join(dir, `.${process.pid}.${Date.now()}.${Math.random().toString(36).slice(2)}.tmp`);
  const fd = openSync(tmp, "w");
  try {
    writeSync(fd, text);
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
  renameSync(tmp, path);
  try {
    const dfd = openSync(dir, "r");
    try {
      fsyncSync(dfd);
    } finally {
      closeSync(dfd);
    }
  } catch {
    // some file systems cannot fsync a directory; the rename is still atomic
  }
}

function restoreFailed(root: string, reason: string): DomainError<"RESTORE_FAILED"> {
  return new DomainError("RESTORE_FAILED", `Cannot resume the daemon in ${root}: ${reason}`, { kind: "BAD_REQUEST", details: { root, reason } });
}

function readJson<T>(root: string, file: string, schema: z.ZodType<T>): T {
  const path = join(root, file);
  let text: string;
  try {
    text = readFileSync(path, "utf8");
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    throw restoreFailed(root, code === "ENOENT" ? `${file} is missing` : `${file} cannot be read (${code ?? (err as Error).message})`);
  }
  let data: unknown;
  try {
    data = JSON.parse(text);
  } catch (err) {
    throw restoreFailed(root, `${file} is not valid JSON (${(err as Error).message})`);
  }
  const parsed = schema.safeParse(data);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    const where = issue?.path.length ? issue.path.map(String).join(".") : "(root)";
    throw restoreFailed(root, `${file} is corrupt: ${where}: ${issue?.message ?? "invalid"}`);
  }
  return parsed.data;
}

/** Read both files of a root; RESTORE_FAILED names the file and what is wrong. */
export function readDaemonRoot(root: string): { meta: DaemonMeta; snapshot: DaemonSnapshot } {
  const meta = readJson(root, META_FILE, DaemonMeta);
  const snapshot = readJson(root, SNAPSHOT_FILE, DaemonSnapshot);
  return { meta, snapshot };
}

/** As writeJsonAtomic, with the file work off the event loop (fs/promises). */
export async function writeJsonAtomicAsync(path: string, body: string): Promise<void> {
  const dir = dirname(path);
  await mkdir(dir, { recursive: true });
  const tmp = join(dir, `.${process.pid}.${Date.now()}.${Math.random().toString(36).slice(2)}.tmp`);
  const fh = await open(tmp, "w");
  try {
    await fh.writeFile(body);
    await fh.sync();
  } finally {
    await fh.close();
  }
  await rename(tmp, path);
  try {
    const dh = await open(dir, "r");
    try {
      await dh.sync();
    } finally {
      await dh.close();
    }
  } catch {
    // some file systems cannot fsync a directory; the rename is still atomic
  }
}

/**
 * The root files of one daemon, written atomically and in order, one write at a time: a request
 * while a write runs is coalesced into the next write, which takes the state as it is then (the
 * newest wins; no older state ever lands after a newer one). The queue itself is durable in
 * SQLite; these files mirror it, so a busy daemon does not rewrite them once per trigger.
 */
export type RootFiles = { /** Path and JSON text. */ files: Array<[string, string]>; /** Runs once these files are on disk. */ written?: () => void };

/**
 * JSON text of `head` (an object) with array fields appended, each item's JSON cached by identity:
 * queued events and transcript messages never change once made, and a daemon with a long queue
 * or transcript would otherwise serialize all of it again at every idle boundary.
 */
export function jsonWithArrays(head: object, arrays: Record<string, readonly object[]>, cache: WeakMap<object, string>): string {
  let text = JSON.stringify(head);
  const parts: string[] = [];
  for (const [key, items] of Object.entries(arrays)) {
    const json = items.map((item) => {
      let s = cache.get(item);
      if (s === undefined) {
        s = JSON.stringify(item);
        cache.set(item, s);
      }
      return s;
    });
    parts.push(`${JSON.stringify(key)}:[${json.join(",")}]`);
  }
  if (parts.length > 0) text = `${text.slice(0, -1)}${text.length > 2 ? "," : ""}${parts.join(",")}}`;
  return text;
}

export class RootWriter {
  private next: (() => RootFiles) | null = null;
  private running: Promise<void> | null = null;
  private failure: unknown;
  /** Ends the pause between two writes early (a caller waits for the files). */
  private hurry: (() => void) | null = null;
  /** When the next write may start (performance.now()). */
  private notBefore = 0;

  /**
   * `dutyCycle`: the most of the time the writer spends writing. After a write that took d ms the
   * next waits until (1 / dutyCycle - 1) * d ms have passed: the files of a daemon with a short
   * queue are written at every idle boundary; those of one with a long backlog (a meta file of
   * thousands of entries) no longer take the server's time from acknowledging triggers.
   */
  constructor(
    private readonly onError: (err: unknown) => void,
    private readonly dutyCycle = 0.25,
  ) {}

  /**
   * Write the files `take()` returns when the write starts (so a busy daemon pays for one copy
   * per write, not per turn); a newer request before that replaces this one.
   */
  schedule(take: () => RootFiles): void {
    this.next = take;
    this.running ??= this.drain();
  }

  /** Schedule, then wait until that state (or a newer one) is on disk; throws a write error. */
  async writeNow(take: () => RootFiles): Promise<void> {
    this.schedule(take);
    this.hurry?.();
    while (this.running) await this.running;
    const failure = this.failure;
    this.failure = undefined;
    if (failure) throw failure;
  }

  /** Resolves once nothing is being written or waits to be (the pause before a write is cut short). */
  async settled(): Promise<void> {
    this.hurry?.();
    while (this.running) await this.running;
  }

  private async drain(): Promise<void> {
    try {
      while (this.next) {
        const pause = this.notBefore - performance.now();
        if (pause > 0) await new Promise<void>((resolve) => {
          const timer = setTimeout(resolve, pause);
          this.hurry = () => {
            clearTimeout(timer);
            resolve();
          };
        });
        this.hurry = null;
        const take = this.next;
        this.next = null;
        const started = performance.now();
        try {
          const { files, written } = take();
          for (const [path, text] of files) await writeJsonAtomicAsync(path, text);
          this.failure = undefined;
          written?.();
        } catch (err) {
          this.failure = err;
          this.onError(err);
        }
        const ended = performance.now();
        this.notBefore = ended + (ended - started) * (1 / this.dutyCycle - 1);
      }
    } finally {
      this.running = null;
    }
  }
}
