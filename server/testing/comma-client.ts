import WebSocket from "ws";

export type Frame = { type: string; ts?: string; requestId?: string; runId?: string; [k: string]: unknown };

/** Test support: a Comma protocol client that records every frame and waits for the ones a test needs. */
export class CommaClient {
  readonly frames: Frame[] = [];
  private waiters: Array<{ pred: (f: Frame) => boolean; resolve: (f: Frame) => void }> = [];

  private constructor(readonly socket: WebSocket) {
    socket.on("message", (data) => {
      const frame = JSON.parse(String(data)) as Frame;
      this.frames.push(frame);
      this.waiters = this.waiters.filter((w) => {
        if (!w.pred(frame)) return true;
        w.resolve(frame);
        return false;
      });
    });
  }

  static async connect(url: string, headers: Record<string, string> = {}): Promise<CommaClient> {
    const socket = new WebSocket(`${url.replace(/^http/, "ws")}/ws`, { headers });
    await new Promise<void>((resolve, reject) => {
      socket.once("open", () => resolve());
      socket.once("error", reject);
    });
    return new CommaClient(socket);
  }

  send(msg: Record<string, unknown> | string): void {
    this.socket.send(typeof msg === "string" ? msg : JSON.stringify(msg));
  }

  /** The first frame (already received or future) matching the predicate. */
  waitFor(pred: (f: Frame) => boolean, timeoutMs = 15_000, fromIndex = 0): Promise<Frame> {
    const seen = this.frames.slice(fromIndex).find(pred);
    if (seen) return Promise.resolve(seen);
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`timed out waiting for a frame; got: ${this.frames.map((f) => f.type).join(", ")}`)), timeoutMs);
      this.waiters.push({
        pred,
        resolve: (f) => {
          clearTimeout(timer);
          resolve(f);
        },
      });
    });
  }

  /** Send a message and wait for the reply carrying its requestId. */
  async request(msg: Record<string, unknown>, timeoutMs?: number): Promise<Frame> {
    const requestId = (msg.requestId as string | undefined) ?? `r-${Math.random().toString(36).slice(2)}`;
    const at = this.frames.length;
    this.send({ ...msg, requestId });
    return this.waitFor((f) => f.requestId === requestId, timeoutMs, at);
  }

  /** Every frame of a run, in order. */
  ofRun(runId: string): Frame[] {
    return this.frames.filter((f) => f.runId === runId);
  }

  close(): void {
    this.socket.close();
  }
}
