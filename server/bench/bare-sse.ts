import { createServer, type ServerResponse } from "node:http";

/**
 * The SSE end of the bare event limits (bare-event-server.ts, bare-pg-reader.ts): an HTTP server
 * whose `GET /sse?mode=batch|event` subscribers get committed events as the same bytes tRPC
 * writes: `mode=batch` one message per (at most) 1,000 events, as events.onEventBatch;
 * `mode=event` one message per event, as events.onEvent, the messages of one delivery in one write
 * (as Switchyard's own SSE writer joins the messages at hand).
 */
export type SseEvent = { id: number; ts: string; type: string; scope: Record<string, string>; payload: unknown };

export async function startSseHub(): Promise<{ url: string; deliver: (events: SseEvent[]) => void }> {
  const subscribers = new Set<{ res: ServerResponse; batched: boolean }>();
  const http = createServer((req, res) => {
    const url = new URL(req.url ?? "/", "http://x");
    if (url.pathname !== "/sse") {
      res.writeHead(404).end();
      return;
    }
    res.writeHead(200, { "content-type": "text/event-stream", "cache-control": "no-cache", connection: "keep-alive" });
    res.write(`event: connected\ndata: {"reconnectAfterInactivityMs":25000}\n\n`);
    const sub = { res, batched: url.searchParams.get("mode") !== "event" };
    subscribers.add(sub);
    req.on("close", () => subscribers.delete(sub));
  });
  await new Promise<void>((resolve) => http.listen(0, "127.0.0.1", resolve));
  const { port } = http.address() as { port: number };
  const deliver = (events: SseEvent[]): void => {
    for (const s of subscribers) {
      if (s.batched) {
        for (let i = 0; i < events.length; i += 1000) {
          const chunk = events.slice(i, i + 1000);
          s.res.write(`\ndata: ${JSON.stringify(chunk)}\nid: ${chunk[chunk.length - 1]!.id}\n\n`);
        }
      } else {
        // the messages at hand in one write, as trpc/sse.ts writes them (the same bytes, as few syscalls)
        let out = "";
        for (const e of events) out += `\ndata: ${JSON.stringify(e)}\nid: ${e.id}\n\n`;
        if (out) s.res.write(out);
      }
    }
  };
  return { url: `http://127.0.0.1:${port}`, deliver };
}
