import type { StreamEvent } from "../../shared/runs";

/** How long streamed text may wait to be joined with the deltas after it (one frame at 60 Hz). */
export const DELTA_WINDOW_MS = 16;
/** A batch is sent at once past this many characters. */
export const DELTA_MAX_CHARS = 8192;

type Pending = { type: "text"; text: string } | { type: "thinking"; id: string; text: string };

/**
 * Joins consecutive text (or thinking) deltas of one agent call into one stream event, with the
 * same text in the same order: a fast model gives a client (and the store) a few events per frame
 * instead of one per token. The first text of an answer (and the first after any other event: a
 * step start, a tool result) is sent at once, so a client sees the answer begin without waiting
 * for the window; the deltas after it are joined and sent DELTA_WINDOW_MS after the first of them,
 * or before any other event, or past DELTA_MAX_CHARS. (Only the first: a stream read in time
 * slices pauses now and then, and sending every delta that follows a pause would double the
 * events of a fast answer.)
 */
export class DeltaBatcher {
  private pending: Pending | undefined;
  private timer: NodeJS.Timeout | undefined;
  /** No text sent since the answer began or since the last other event: the next delta goes at once. */
  private fresh = true;

  constructor(private readonly send: (event: StreamEvent) => void) {}

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
    this.fresh = true;
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
    this.fresh = false;
    this.send(p);
  }

  private append(fresh: Pending, text: string): void {
    if (this.pending) this.pending.text += text;
    else this.pending = fresh;
    if (this.pending.text.length >= DELTA_MAX_CHARS) return this.flush();
    if (this.fresh) return this.flush();
    this.timer ??= setTimeout(() => {
      this.timer = undefined;
      this.flush();
    }, DELTA_WINDOW_MS);
  }
}
