/**
 * The event pipeline's limit: the same hops as Switchyard's bus without Switchyard. Events are
 * serialized, committed in the same group commit into the same table (bare-db.ts), then written
 * to each SSE subscriber as the same bytes tRPC writes: `GET /sse?mode=batch` one message per
 * (at most) 1,000 events of a commit, as events.onEventBatch; `mode=event` one message per
 * event, as events.onEvent. Publishes from inside with event-load.ts's loops. Args: home.
 */
import { createServer, type ServerResponse } from "node:http";
import { join } from "node:path";
import { BareEventLog, openBareDb, type BareEvent } from "./bare-db";
import { serve } from "./event-load";

const [home] = process.argv.slice(2);
const subscribers = new Set<{ res: ServerResponse; batched: boolean }>();

function deliver(events: BareEvent[]): void {
  for (const s of subscribers) {
    if (s.batched) {
      for (let i = 0; i < events.length; i += 1000) {
        const chunk = events.slice(i, i + 1000);
        s.res.write(`\ndata: ${JSON.stringify(chunk)}\nid: ${chunk[chunk.length - 1]!.id}\n\n`);
      }
    } else {
      for (const e of events) s.res.write(`\ndata: ${JSON.stringify(e)}\nid: ${e.id}\n\n`);
    }
  }
}

const log = new BareEventLog(openBareDb(join(home!, "bare-events.db")), deliver);

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
process.on("SIGTERM", () => process.exit(0));
await serve((payload) => log.append("system.noted", payload), () => log.lastId, { url: `http://127.0.0.1:${port}` });
