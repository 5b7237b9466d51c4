/**
 * The event pipeline's limit: the same hops as Switchyard's bus without Switchyard. Events are
 * serialized, committed in the same group commit into the same table (bare-db.ts), then written
 * to each SSE subscriber as the same bytes tRPC writes (bare-sse.ts: `GET /sse?mode=batch` as
 * events.onEventBatch, `mode=event` as events.onEvent). Publishes from inside with event-load.ts's
 * loops. Args: home.
 */
import { join } from "node:path";
import { BareEventLog, openBareDb } from "./bare-db";
import { startSseHub } from "./bare-sse";
import { serve } from "./event-load";

const [home] = process.argv.slice(2);
const hub = await startSseHub();
const log = new BareEventLog(openBareDb(join(home!, "bare-events.db")), hub.deliver);
process.on("SIGTERM", () => process.exit(0));
await serve((payload) => log.append("system.noted", payload), () => log.lastId, { url: hub.url });
