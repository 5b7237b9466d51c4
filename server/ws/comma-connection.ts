import type { WebSocket } from "ws";
import type { Logger } from "../log";
import type { Services } from "../trpc/context";
import type { WsGateway } from "./gateway";

/**
 * The Comma Agents daemon protocol on `/ws`. This is the transport layer: framing, `ts` on every
 * frame, PARSE_ERROR for invalid JSON, VALIDATION_ERROR for frames without a known type, and
 * `ping`. The run messages are added by the strategy-runs domain.
 */
export type CommaFrame = { type: string; requestId?: string; [key: string]: unknown };

export function sendFrame(socket: WebSocket, frame: CommaFrame): void {
  if (socket.readyState !== socket.OPEN) return;
  socket.send(JSON.stringify({ ...frame, ts: new Date().toISOString() }));
}

export function attachCommaProtocol(ws: WsGateway, deps: { services: Services; log: Logger }): void {
  ws.onConnection((socket) => {
    socket.on("message", (data, isBinary) => {
      if (isBinary) return sendFrame(socket, { type: "error", code: "PARSE_ERROR", message: "Invalid JSON" });
      let msg: unknown;
      try {
        msg = JSON.parse(data.toString());
      } catch {
        return sendFrame(socket, { type: "error", code: "PARSE_ERROR", message: "Invalid JSON" });
      }
      const requestId = typeof msg === "object" && msg !== null && typeof (msg as { requestId?: unknown }).requestId === "string" ? (msg as { requestId: string }).requestId : undefined;
      try {
        if (typeof msg !== "object" || msg === null || Array.isArray(msg)) {
          return sendFrame(socket, { type: "error", code: "VALIDATION_ERROR", message: `Invalid message: : Expected object, received ${Array.isArray(msg) ? "array" : msg === null ? "null" : typeof msg}`, ...(requestId ? { requestId } : {}) });
        }
        const type = (msg as { type?: unknown }).type;
        if (type === "ping") return sendFrame(socket, { type: "pong", ...(requestId ? { requestId } : {}) });
        return sendFrame(socket, { type: "error", code: "VALIDATION_ERROR", message: `Invalid message: type: unsupported message type ${JSON.stringify(type ?? null)}`, ...(requestId ? { requestId } : {}) });
      } catch (err) {
        deps.log.error({ err: deps.services.redact(String(err)) }, "ws handler failed");
        sendFrame(socket, { type: "error", code: "INTERNAL_ERROR", message: "Internal error", ...(requestId ? { requestId } : {}) });
      }
    });
  });
}
