import postgres from "postgres";
import { EventBus } from "../events/bus";
import { PgEventStore } from "../events/pg-event-store";

/**
 * Another process on the same PostgreSQL event store (test support for the gap-free events):
 *   tsx pg-events-child.ts publish <url> <name> <count>      publishes <count> events in bursts, prints "done"
 *   tsx pg-events-child.ts subscribe <url> <name>:<afterId>... one subscriber each; prints "<name> <id>" per event
 */
const [mode, url, ...rest] = process.argv.slice(2) as [string, string, ...string[]];
const sql = postgres(url, { max: 4, onnotice: () => {} });
const bus = await new EventBus(new PgEventStore(sql)).open();

if (mode === "publish") {
  const [name, count] = rest as [string, string];
  const total = Number(count);
  for (let sent = 0; sent < total; ) {
    const burst = Math.min(total - sent, 1 + Math.floor(Math.random() * 40));
    await Promise.all(Array.from({ length: burst }, (_, i) => bus.publish("system.noted", { message: `${name} ${sent + i}` })));
    sent += burst;
    if (Math.random() < 0.3) await new Promise((r) => setTimeout(r, Math.random() * 5));
  }
  bus.close();
  await bus.drain();
  await sql.end();
  process.stdout.write("done\n");
} else {
  const out: string[] = [];
  const flush = () => {
    if (out.length > 0) process.stdout.write(out.splice(0).join(""));
  };
  setInterval(flush, 20).unref();
  for (const spec of rest) {
    const [name, after] = spec.split(":") as [string, string];
    void (async () => {
      for await (const batch of bus.subscribeBatches({ afterId: Number(after) })) {
        for (const e of batch) out.push(`${name} ${e.id}\n`);
      }
    })();
  }
  process.stdout.write("ready\n");
}
