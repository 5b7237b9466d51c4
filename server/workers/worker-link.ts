import type { WebSocket } from "ws";
import { WorkerMessage, type ServerMessage, type WorkerCapabilities } from "../../shared/workers";
import { DomainError } from "../errors";
import { deserializeError } from "../agents/local-host";
import type { Logger } from "../log";

/** How long a call may take before it fails with WORKER_CALL_FAILED (long polls add their own wait). */
const CALL_TIMEOUT_MS = 120_000;

/**
 * One connected worker, server side: calls of the session seam sent as JSON frames, answered by
 * id; its output notices; its liveness (the last frame or pong seen).
 */
export class WorkerLink {
  private nextId = 1;
  private readonly pending = new Map<number, { resolve(v: unknown): void; reject(e: Error): void; timer: NodeJS.Timeout }>();
  private readonly outputListeners = new Set<(agentId: string, session: number) => void>();
  private closed = false;
  /** When the worker was last heard from (any frame or pong). */
  lastSeen = Date.now();

  constructor(
    private readonly socket: WebSocket,
    readonly name: string,
    readonly epoch: number,
    readonly capabilities: WorkerCapabilities,
    private readonly log: Logger,
  ) {
    socket.on("pong", () => (this.lastSeen = Date.now()));
  }

  get isOpen(): boolean {
    return !this.closed;
  }

  /** A frame from the worker after its hello. */
  receive(raw: string): void {
    this.lastSeen = Date.now();
    let msg: WorkerMessage;
    try {
      msg = WorkerMessage.parse(JSON.parse(raw));
    } catch (err) {
      this.log.warn({ worker: this.name, err: (err as Error).message }, "a worker sent a frame that is not of the protocol; ignored");
      return;
    }
    if (msg.type === "output") {
      for (const l of this.outputListeners) l(msg.agentId, msg.session);
      return;
    }
    if (msg.type !== "result") return;
    const call = this.pending.get(msg.id);
    if (!call) return;
    this.pending.delete(msg.id);
    clearTimeout(call.timer);
    if (msg.ok) call.resolve(msg.value);
    else call.reject(deserializeError(msg.error ?? { name: "Error", message: "the worker's call failed" }));
  }

  /** A call of the session seam on the worker; its DomainError comes back as thrown there. */
  call(call: string, args: unknown[], timeoutMs = CALL_TIMEOUT_MS): Promise<unknown> {
    if (this.closed) return Promise.reject(new DomainError("WORKER_UNREACHABLE", `Worker ${this.name} is not connected`, { kind: "CONFLICT" }));
    const id = this.nextId++;
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        this.pending.delete(id);
        reject(new DomainError("WORKER_CALL_FAILED", `Worker ${this.name} did not answer ${call} within ${Math.round(timeoutMs / 1000)} s`, { kind: "TIMEOUT" }));
      }, timeoutMs);
      timer.unref();
      this.pending.set(id, { resolve, reject, timer });
      this.send({ type: "call", id, call, args, epoch: this.epoch });
    });
  }

  onOutput(listener: (agentId: string, session: number) => void): () => void {
    this.outputListeners.add(listener);
    return () => this.outputListeners.delete(listener);
  }

  send(msg: ServerMessage): void {
    if (this.closed) return;
    this.socket.send(JSON.stringify(msg));
  }

  ping(): void {
    if (!this.closed) this.socket.ping();
  }

  /** The connection ended (or is cut now): calls in flight fail. */
  close(code?: number, reason?: string): void {
    if (this.closed) return;
    this.closed = true;
    for (const [id, call] of this.pending) {
      clearTimeout(call.timer);
      call.reject(new DomainError("WORKER_CALL_FAILED", `Worker ${this.name}'s connection closed during the call`, { kind: "CONFLICT" }));
      this.pending.delete(id);
    }
    if (code !== undefined) this.socket.close(code, reason);
    else this.socket.terminate();
  }
}
