import type { StreamEvent } from "../../shared/runs";

/** How long streamed text may wait to be joined with the deltas after it (one frame at 60 Hz). */
export const DELTA_WINDOW_MS = 16;
/** A batch is sent at once past this many characters. */
export const DELTA_MAX_CHARS = 8192;

type Pending = { type: "text"; text: string } | { type: "thinking"; id: string; text: string };

/**
 * Joins consecutive text (or thinking) deltas of one agent call into one stream event, with the
 * same text in the same order: a fast model gives a client (and the store) a few events per frame
 * instead of one per token. A leading-edge throttle: a delta that finds the batcher quiet (nothing
 * waiting, no text sent for DELTA_WINDOW_MS: the first text of an answer, or a slow model's next
 * token) is sent at once; the deltas that follow it are joined and sent DELTA_WINDOW_MS after the
 * first of them, or before any other event, or past DELTA_MAX_CHARS.
 */
export class DeltaBatcher {
  private pending: Pending | undefined;
  private timer: NodeJS.Timeout | undefined;
  private lastSent = Number.NEGATIVE_INFINITY;

  constructor(
    private readonly send: (event: StreamEvent) => void,
    private readonly now: () => number = () => performance.now(),
  ) {}

  text(text: string): void {
    if (this.pending?.type !== "text") this.flush();
    this.append({ type: "text", text }, text);
  }

  thinking(id: string, text: string): void {
    if (this.pending?.type !== "thinking" || this.pending.id !== id) this.flush();
    this.append({ type: "thinking", id, text }, text);
  }

  /** Any other event: what is pending goes first. */
  event(event: StreamEvent): void {
    this.flush();
    this.send(event);
  }

  flush(): void {
    if (this.timer) {
      clearTimeout(this.timer);
      this.timer = undefined;
    }
    const p = this.pending;
    this.pending = undefined;
    if (!p) return;
    this.lastSent = this.now();
    this.send(p);
  }

  private append(fresh: Pending, text: string): void {
    if (this.pending) this.pending.text += text;
    else this.pending = fresh;
    if (this.pending.text.length >= DELTA_MAX_CHARS) return this.flush();
    if (!this.timer && this.now() - this.lastSent >= DELTA_WINDOW_MS) return this.flush();
    this.timer ??= setTimeout(() => {
      this.timer = undefined;
      this.flush();
    }, DELTA_WINDOW_MS);
  }
}
