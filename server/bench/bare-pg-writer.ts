/**
 * The PostgreSQL event pipeline's limit, its writing half: the same hops as Switchyard's bus
 * appending into PostgreSQL, without Switchyard. Events are serialized and committed in the same
 * group commit (everything published while the previous commit was under way, or 4,096 waiting,
 * goes in one transaction; one transaction at a time), as multi-row INSERTs of the same rows
 * into the same `events` table (4,000 rows a statement, as the store), with one NOTIFY per
 * commit carrying its newest id. It numbers the rows itself: the only writer of its database, it
 * needs neither the advisory lock nor the `max(id)` read that let Switchyard's appenders in
 * several processes stay gap-free (a lighter limit, never a flattering one). Publishes from
 * inside with event-load.ts's loops. Env: BENCH_BARE_PG_URL (its own database).
 */
import { BARE_CHANNEL, bareSql, createBareSchema, maxEventId } from "./bare-pg";
import { serve } from "./event-load";

type Row = { id: number; ts: number; type: string; run_id: null; agent_id: null; daemon_id: null; conversation_id: null; payload: string };
const COLUMNS = ["id", "ts", "type", "run_id", "agent_id", "daemon_id", "conversation_id", "payload"] as const;
const CHUNK = 4000;
const MAX_BATCH = 4096;

const sql = bareSql(process.env.BENCH_BARE_PG_URL!);
await createBareSchema(sql);
let nextId = (await maxEventId(sql)) + 1;
let committedId = nextId - 1;
let pending: Row[] = [];
let timer: NodeJS.Immediate | undefined;
let committing: Promise<void> | undefined;

function append(type: string, payload: unknown): void {
  pending.push({ id: 0, ts: Date.now(), type, run_id: null, agent_id: null, daemon_id: null, conversation_id: null, payload: JSON.stringify(payload) });
  if (pending.length >= MAX_BATCH) flush();
  else timer ??= setImmediate(flush);
}

function flush(): void {
  if (timer) clearImmediate(timer);
  timer = undefined;
  if (pending.length === 0 || committing) return;
  const batch = pending;
  pending = [];
  for (const r of batch) r.id = nextId++;
  const last = batch[batch.length - 1]!.id;
  committing = sql
    .begin(async (tx) => {
      for (let i = 0; i < batch.length; i += CHUNK) await tx`INSERT INTO events ${tx(batch.slice(i, i + CHUNK), ...COLUMNS)}`;
      await tx`SELECT pg_notify(${BARE_CHANNEL}, ${String(last)})`;
    })
    .then(() => void (committedId = last))
    .finally(() => {
      committing = undefined;
      if (pending.length > 0) flush();
    });
}

process.on("SIGTERM", () => process.exit(0));
await serve((payload) => append("system.noted", payload), () => committedId, {});
