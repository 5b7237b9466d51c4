import Database from "better-sqlite3";
import { Agent, request } from "node:http";
import { join } from "node:path";
import { createSwitchyardClient } from "../client";
import { removeHome, spawnServer, tempHome } from "../testing/server-harness";
import { fmt, type BenchRow } from "./table";

/**
 * Acknowledged daemon triggers per second from `clients` concurrent HTTP clients (the webhook),
 * against a bare SQLite baseline in the same run: prepared insert, WAL, synchronous=NORMAL, one
 * transaction per batch of `clients` rows (the most the implementation can batch per turn here).
 */
function baseline(dir: string, batch: number, seconds: number): number {
  const db = new Database(join(dir, "baseline.db"));
  db.pragma("journal_mode = WAL");
  db.pragma("synchronous = NORMAL");
  db.exec("CREATE TABLE q (daemon_id TEXT NOT NULL, seq INTEGER NOT NULL, enqueued_at INTEGER NOT NULL, payload TEXT NOT NULL, state TEXT NOT NULL, PRIMARY KEY (daemon_id, seq))");
  const insert = db.prepare("INSERT INTO q VALUES (?, ?, ?, ?, 'pending')");
  const tx = db.transaction((from: number) => {
    for (let i = from; i < from + batch; i++) insert.run("daemon_x", i, Date.now(), JSON.stringify({ n: i }));
  });
  let n = 0;
  const started = performance.now();
  while (performance.now() - started < seconds * 1000) {
    tx(n);
    n += batch;
  }
  db.close();
  return n / ((performance.now() - started) / 1000);
}

export async function benchDaemonTriggers(options: { clients?: number; seconds?: number } = {}): Promise<BenchRow[]> {
  const clients = options.clients ?? 10;
  const seconds = options.seconds ?? 5;
  const home = tempHome("switchyard-bench-");
  const server = await spawnServer({ home, build: true, env: { SWITCHYARD_LOG_LEVEL: "warn" } });
  try {
    const api = createSwitchyardClient({ url: server.url });
    const d = await api.daemons.spawn.mutate({ task: "Count triggers.", model: "mock/echo", eventQueueCapacity: 1_000_000 });
    // node:http with keep-alive: fetch's per-request cost would be what is measured otherwise
    const agent = new Agent({ keepAlive: true, maxSockets: clients });
    const target = new URL(`${server.url}/daemons/${d.id}/trigger`);
    const post = (body: string) =>
      new Promise<number>((resolve, reject) => {
        const req = request(
          { host: target.hostname, port: target.port, path: target.pathname, method: "POST", agent, headers: { "content-type": "application/json", "content-length": Buffer.byteLength(body) } },
          (res) => {
            res.resume();
            res.on("end", () => resolve(res.statusCode ?? 0));
          },
        );
        req.on("error", reject);
        req.end(body);
      });
    let acknowledged = 0;
    let failed = 0;
    const started = performance.now();
    const deadline = started + seconds * 1000;
    await Promise.all(
      Array.from({ length: clients }, async (_, c) => {
        for (let i = 0; performance.now() < deadline; i++) {
          if ((await post(JSON.stringify({ c, i }))) === 202) acknowledged++;
          else failed++;
        }
      }),
    );
    const rate = acknowledged / ((performance.now() - started) / 1000);
    agent.destroy();
    const limit = baseline(home, clients, seconds);
    return [
      { bench: "daemon triggers", metric: `bare SQLite, ${clients} rows per transaction (limit)`, value: fmt.rate(limit), goal: "-" },
      { bench: "daemon triggers", metric: `acknowledged triggers, ${clients} HTTP clients`, value: fmt.rate(rate), goal: ">= 5,000/s", met: rate >= 5000 && failed === 0 },
      { bench: "daemon triggers", metric: "ratio to limit", value: fmt.ratio(rate / limit), goal: ">= 0.50x", met: rate / limit >= 0.5 },
    ];
  } finally {
    await server.kill("SIGTERM");
    removeHome(home);
  }
}
