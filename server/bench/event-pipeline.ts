import Database from "better-sqlite3";
import { spawn } from "node:child_process";
import { createInterface } from "node:readline";
import { join } from "node:path";
import { createServer, type SwitchyardServer } from "../app";
import { loadConfig } from "../config";
import { removeHome, tempHome } from "../testing/server-harness";
import { fmt, type BenchRow } from "./table";

/**
 * The event pipeline: N small events through the bus into the store and out to one SSE subscriber
 * (a separate process), against a bare better-sqlite3 baseline in the same run; then the
 * publish-to-delivery latency at a steady 10,000 events/s.
 */

const now = () => performance.timeOrigin + performance.now();

function baselineRate(n: number, dir: string): number {
  const db = new Database(join(dir, "baseline.db"));
  db.pragma("journal_mode = WAL");
  db.pragma("synchronous = NORMAL");
  db.exec("CREATE TABLE events (id INTEGER PRIMARY KEY, ts INTEGER NOT NULL, type TEXT NOT NULL, run_id TEXT, agent_id TEXT, daemon_id TEXT, conversation_id TEXT, payload TEXT NOT NULL)");
  const insert = db.prepare("INSERT INTO events (id, ts, type, run_id, agent_id, daemon_id, conversation_id, payload) VALUES (?, ?, ?, ?, ?, ?, ?, ?)");
  const batch = db.transaction((from: number, to: number) => {
    for (let i = from; i < to; i++) insert.run(i + 1, Date.now(), "system.noted", null, null, null, null, JSON.stringify({ message: "bench", data: { i } }));
  });
  const started = performance.now();
  for (let i = 0; i < n; i += 1000) batch(i, Math.min(n, i + 1000));
  const seconds = (performance.now() - started) / 1000;
  db.close();
  return n / seconds;
}

type SubscriberResult = { count: number; firstAt: number; lastAt: number; p50: number; p99: number; samples: number };

async function startSubscriber(url: string, expected: number, afterId: number, procedure = "events.onEventBatch"): Promise<{ result: Promise<SubscriberResult> }> {
  const child = spawn(process.execPath, ["--import", "tsx", join(import.meta.dirname, "sse-subscriber.ts"), url, String(expected), String(afterId), procedure], {
    stdio: ["ignore", "pipe", "inherit"],
  });
  const lines = createInterface({ input: child.stdout! })[Symbol.asyncIterator]();
  const first = await lines.next();
  if (first.done || !JSON.parse(first.value).ready) throw new Error("subscriber did not start");
  // wrapped: an async function returning a bare promise would wait for it
  const result = (async () => {
    const line = await lines.next();
    if (line.done) throw new Error("subscriber ended without a result");
    return JSON.parse(line.value) as SubscriberResult;
  })();
  return { result };
}

async function withServer<T>(fn: (server: SwitchyardServer, url: string) => Promise<T>): Promise<T> {
  const home = tempHome("switchyard-bench-");
  const server = await createServer({ config: loadConfig({ SWITCHYARD_HOME: home, SWITCHYARD_PORT: "0", SWITCHYARD_LOG_LEVEL: "warn" }) });
  const { url } = await server.start();
  try {
    return await fn(server, url);
  } finally {
    await server.stop("bench");
    removeHome(home);
  }
}

const tick = () => new Promise<void>((r) => setImmediate(r));

export async function benchEventPipeline(options: { events?: number; latencySeconds?: number } = {}): Promise<BenchRow[]> {
  const n = options.events ?? 1_000_000;
  const dir = tempHome("switchyard-bench-base-");
  const baseline = baselineRate(n, dir);
  removeHome(dir);

  let peakRss = 0;
  const rssTimer = setInterval(() => (peakRss = Math.max(peakRss, process.memoryUsage().rss)), 100);

  const throughput = await withServer(async (server, url) => {
    const bus = server.services.bus;
    const done = await startSubscriber(url, n, bus.lastId);
    const started = now();
    for (let i = 0; i < n; ) {
      const end = Math.min(n, i + 5000);
      for (; i < end; i++) void bus.publish("system.noted", { message: "bench", data: { i } });
      await tick();
    }
    const published = now();
    const result = await done.result;
    return { rate: n / ((result.lastAt - started) / 1000), publishRate: n / ((published - started) / 1000), count: result.count };
  });

  const seconds = options.latencySeconds ?? 5;
  const latency = await withServer(async (server, url) => {
    const bus = server.services.bus;
    const total = seconds * 10_000;
    const done = await startSubscriber(url, total, bus.lastId);
    const started = now();
    for (let sent = 0; sent < total; ) {
      const due = Math.min(total, Math.floor(((now() - started) / 1000) * 10_000) + 100);
      for (; sent < due; sent++) void bus.publish("system.noted", { message: "bench", data: { t: now() } });
      await new Promise((r) => setTimeout(r, 5));
    }
    const result = await done.result;
    return { p50: result.p50, p99: result.p99, count: result.count, rate: total / ((now() - started) / 1000) };
  });
  clearInterval(rssTimer);

  const ratio = throughput.rate / baseline;
  return [
    { bench: "event pipeline", metric: "bare better-sqlite3 insert (limit)", value: fmt.rate(baseline), goal: "-" },
    { bench: "event pipeline", metric: `bus -> store -> SSE, ${n.toLocaleString("en-US")} events`, value: fmt.rate(throughput.rate), goal: ">= 0.5x limit", met: ratio >= 0.5 && throughput.count === n },
    { bench: "event pipeline", metric: "ratio to limit", value: fmt.ratio(ratio), goal: ">= 0.50x", met: ratio >= 0.5 },
    { bench: "event pipeline", metric: "publish (acknowledge) rate", value: fmt.rate(throughput.publishRate), goal: "-" },
    { bench: "event pipeline", metric: `p50 publish->SSE @ ${fmt.rate(latency.rate)}`, value: fmt.ms(latency.p50), goal: "-" },
    { bench: "event pipeline", metric: `p99 publish->SSE @ ${fmt.rate(latency.rate)}`, value: fmt.ms(latency.p99), goal: "< 25 ms", met: latency.p99 < 25 && latency.count === seconds * 10_000 },
    { bench: "event pipeline", metric: "server peak RSS", value: fmt.mb(peakRss), goal: "-" },
  ];
}
