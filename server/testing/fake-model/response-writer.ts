import type { ServerResponse } from "node:http";
import { setTimeout as sleep } from "node:timers/promises";

/** Thrown when the client went away; the server records the request as aborted. */
export class ClientGoneError extends Error {
  constructor() {
    super("client closed the connection");
    this.name = "ClientGoneError";
  }
}

/** Writes one answer: JSON or SSE, paced, and stops as soon as the client closes the connection. */
export class ResponseWriter {
  private readonly gone = new AbortController();
  private deltasWritten = 0;
  /** Sleep between deltas. */
  delayMs = 0;

  constructor(private readonly res: ServerResponse) {
    res.on("close", () => {
      if (!res.writableFinished) this.gone.abort();
    });
  }

  get aborted(): boolean {
    return this.gone.signal.aborted;
  }

  get status(): number {
    return this.res.statusCode;
  }

  private check(): void {
    if (this.aborted) throw new ClientGoneError();
  }

  async sleep(ms: number): Promise<void> {
    this.check();
    if (ms <= 0) return;
    await sleep(ms, undefined, { signal: this.gone.signal }).catch(() => undefined);
    this.check();
  }

  /** Resolves never; throws once the client closes the connection. */
  async hang(): Promise<never> {
    this.check();
    await new Promise<void>((resolve) => this.gone.signal.addEventListener("abort", () => resolve(), { once: true }));
    throw new ClientGoneError();
  }

  json(status: number, body: unknown, headers: Record<string, string> = {}): void {
    this.check();
    const text = JSON.stringify(body);
    this.res.writeHead(status, { "content-type": "application/json", "content-length": Buffer.byteLength(text), ...headers });
    this.res.end(text);
  }

  text(status: number, body: string, headers: Record<string, string> = {}): void {
    this.check();
    this.res.writeHead(status, { "content-type": "text/plain; charset=utf-8", ...headers });
    this.res.end(body);
  }

  startSse(headers: Record<string, string> = {}): void {
    this.check();
    this.res.writeHead(200, {
      "content-type": "text/event-stream; charset=utf-8",
      "cache-control": "no-cache",
      connection: "keep-alive",
      ...headers,
    });
    this.res.flushHeaders();
  }

  /** One SSE event: `event: name` (when given) and `data: <json>`. */
  event(name: string | undefined, data: unknown): void {
    this.check();
    const head = name === undefined ? "" : `event: ${name}\n`;
    this.res.write(`${head}data: ${typeof data === "string" ? data : JSON.stringify(data)}\n\n`);
  }

  /** An event that carries a delta: sleeps `delayMs` first, except before the first delta. */
  async delta(name: string | undefined, data: unknown): Promise<void> {
    if (this.deltasWritten++ > 0) await this.sleep(this.delayMs);
    this.event(name, data);
  }

  end(): void {
    this.check();
    this.res.end();
  }

  /** Cuts the connection (for failures after the headers were sent). */
  destroy(): void {
    this.res.destroy();
  }
}

/** What a wire-format writer gets: the writer, the model name to echo, and an id source. */
export type WireContext = { w: ResponseWriter; model: string; newId: (prefix: string) => string };
