/**
 * The daemon triggers' limit: a bare Fastify endpoint doing what a trigger acknowledged once it
 * is durable needs, without Switchyard. `POST /daemons/:id/trigger` parses the JSON body, puts the
 * queue row into a group commit (one transaction per event-loop turn, as daemon_queue's) and
 * answers 202 {seq} once it is committed; the `daemon.triggered` event row follows in the events'
 * group commit (bare-db.ts), as Switchyard's does. Same tables, same pragmas. Args: home.
 */
import Fastify from "fastify";
import { join } from "node:path";
import { BareEventLog, openBareDb } from "./bare-db";

const [home] = process.argv.slice(2);
const db = openBareDb(join(home!, "bare-triggers.db"));
const events = new BareEventLog(db);
const insert = db.prepare("INSERT INTO daemon_queue (daemon_id, seq, enqueued_at, payload, state) VALUES (?, ?, ?, ?, 'pending')");
type Row = { daemonId: string; seq: number; enqueuedAt: string; payload: string; done: () => void };
let waiting: Row[] = [];
let timer: NodeJS.Immediate | undefined;
const commit = db.transaction((rows: Row[]) => {
  for (const r of rows) insert.run(r.daemonId, r.seq, r.enqueuedAt, r.payload);
});
function flush(): void {
  timer = undefined;
  const batch = waiting;
  waiting = [];
  commit(batch);
  for (const r of batch) r.done();
}
const seqs = new Map<string, number>();

const app = Fastify({ logger: false });
app.post<{ Params: { id: string } }>("/daemons/:id/trigger", async (req, reply) => {
  const daemonId = req.params.id;
  const seq = seqs.get(daemonId) ?? 0;
  seqs.set(daemonId, seq + 1);
  const payload = req.body ?? null;
  await new Promise<void>((done) => {
    waiting.push({ daemonId, seq, enqueuedAt: new Date().toISOString(), payload: JSON.stringify(payload), done });
    timer ??= setImmediate(flush);
  });
  events.append("daemon.triggered", { summary: `#${seq}: ${typeof payload === "string" ? payload : JSON.stringify(payload)}`.slice(0, 200), seq, pendingEventCount: 0 }, { daemonId });
  return reply.code(202).send({ seq });
});
const url = await app.listen({ port: 0, host: "127.0.0.1" });
process.on("SIGTERM", () => {
  events.flush();
  db.close();
  process.exit(0);
});
process.stdout.write(`${JSON.stringify({ url, db: join(home!, "bare-triggers.db") })}\n`);
