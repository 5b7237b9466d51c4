import type { IncomingMessage, Server } from "node:http";
import type { Duplex } from "node:stream";
import { WebSocketServer, type WebSocket } from "ws";
import type { GuardResult } from "../http/security";

export type WsConnectionHandler = (socket: WebSocket, req: IncomingMessage) => void;

const STATUS_TEXT: Record<number, string> = { 400: "Bad Request", 401: "Unauthorized", 403: "Forbidden", 404: "Not Found" };

/**
 * WebSocket upgrades on the server's one port. Only `/ws`; the request guard (Host, Origin,
 * token) runs before the upgrade is accepted.
 */
export class WsGateway {
  private readonly wss = new WebSocketServer({ noServer: true, maxPayload: 16 * 1024 * 1024 });
  private handler: WsConnectionHandler = (socket) => socket.close(1011, "not ready");
  private workerHandler: ((socket: WebSocket, worker: string, req: IncomingMessage) => void) | undefined;

  constructor(private readonly guard: (req: IncomingMessage) => GuardResult) {}

  get clientCount(): number {
    return this.wss.clients.size;
  }

  onConnection(handler: WsConnectionHandler): void {
    this.handler = handler;
  }

  /** `/worker`: a worker's connection (workers.service.ts), with the worker its token names. */
  onWorker(handler: (socket: WebSocket, worker: string, req: IncomingMessage) => void): void {
    this.workerHandler = handler;
  }

  attach(server: Server): void {
    server.on("upgrade", (req: IncomingMessage, socket: Duplex, head: Buffer) => {
      const path = (req.url ?? "/").split("?")[0];
      const verdict = this.guard(req);
      if (!verdict.ok) return reject(socket, verdict.status, verdict.reason);
      if (path === "/worker") {
        if (verdict.kind !== "worker" || !this.workerHandler) return reject(socket, 401, "A worker connects with its own token: yard worker token create --name <name>");
        const { worker } = verdict;
        return this.wss.handleUpgrade(req, socket, head, (ws) => this.workerHandler!(ws, worker, req));
      }
      if (verdict.kind === "worker") return reject(socket, 403, "A worker's token is for /worker, /git/ and /health only");
      // the Comma protocol drives strategy runs: not within an agent's rights
      if (verdict.kind === "agent") return reject(socket, 403, "An agent's token cannot use the daemon protocol (/ws)");
      if (path !== "/ws") return reject(socket, 404, "Not Found");
      this.wss.handleUpgrade(req, socket, head, (ws) => this.handler(ws, req));
    });
  }

  close(): void {
    for (const client of this.wss.clients) client.close(1001, "server shutting down");
    this.wss.close();
  }
}

function reject(socket: Duplex, status: number, body: string): void {
  if (socket.writable) {
    socket.write(
      `HTTP/1.1 ${status} ${STATUS_TEXT[status] ?? "Error"}\r\nConnection: close\r\nContent-Type: text/plain; charset=utf-8\r\nContent-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`,
    );
  }
  socket.destroy();
}
