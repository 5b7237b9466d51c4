/**
 * The PostgreSQL event pipeline's limit, its reading half: another process on another connection,
 * as Switchyard's second server. It LISTENs for the writer's NOTIFY, reads the new rows by
 * `id > cursor` in pages of 1,000 (one read at a time; a NOTIFY during a read reads again after
 * it), turns them back into events (the payload parsed, the time as ISO) and writes them to its
 * SSE subscribers as the same bytes tRPC writes (bare-sse.ts). Env: BENCH_BARE_PG_URL. Prints
 * `{"url": ...}` once listening.
 */
import { BARE_CHANNEL, bareSql, maxEventId } from "./bare-pg";
import { startSseHub, type SseEvent } from "./bare-sse";

type Row = { id: string; ts: string; type: string; run_id: string | null; agent_id: string | null; daemon_id: string | null; conversation_id: string | null; payload: string };

/** A row back into an event, as Switchyard's store does (the scope from the columns that are set). */
function toEvent(r: Row): SseEvent {
  const scope: Record<string, string> = {};
  if (r.run_id !== null) scope.runId = r.run_id;
  if (r.agent_id !== null) scope.agentId = r.agent_id;
  if (r.daemon_id !== null) scope.daemonId = r.daemon_id;
  if (r.conversation_id !== null) scope.conversationId = r.conversation_id;
  return { id: Number(r.id), ts: new Date(Number(r.ts)).toISOString(), type: r.type, scope, payload: JSON.parse(r.payload) as unknown };
}

const sql = bareSql(process.env.BENCH_BARE_PG_URL!);
const hub = await startSseHub();
let cursor = await maxEventId(sql);
let reading: Promise<void> | undefined;
let again = false;

async function readNew(): Promise<void> {
  for (;;) {
    const rows = await sql<Row[]>`SELECT id, ts, type, run_id, agent_id, daemon_id, conversation_id, payload FROM events WHERE id > ${cursor} ORDER BY id LIMIT 1000`;
    if (rows.length === 0) return;
    const events = rows.map(toEvent);
    cursor = events[events.length - 1]!.id;
    hub.deliver(events);
    if (rows.length < 1000) return;
  }
}

function wake(): void {
  if (reading) {
    again = true;
    return;
  }
  reading = readNew().finally(() => {
    reading = undefined;
    if (again) {
      again = false;
      wake();
    }
  });
}

await sql.listen(BARE_CHANNEL, wake, wake);
process.on("SIGTERM", () => process.exit(0));
process.stdout.write(`${JSON.stringify({ url: hub.url })}\n`);
