import Database from "better-sqlite3";
import { Agent, request } from "node:http";
import { join } from "node:path";
import { createSwitchyardClient } from "../client";
import { removeHome, tempHome } from "../testing/server-harness";
import { startBenchServer, startHelper, type BenchServer, type Helper } from "./bench-server";
import { waitIdle } from "./load";
import { interleave } from "./rounds";
import { addCounts, fmt, median, type BenchRow } from "./table";

/**
 * Daemon triggers acknowledged per second (`POST /daemons/:id/trigger`, 202 once the trigger is
 * durable) from `clients` keep-alive HTTP clients for `seconds`, against the limit for that job:
 * a bare Fastify endpoint in a process of its own committing the same rows per request (the queue
 * row, then the event row) with the same group commit (bare-trigger-server.ts), driven by the
 * same clients. The two interleaved, `rounds` times each. Each round of Switchyard's has a fresh
 * daemon, stopped after the round so it does not drain its backlog while the limit runs; every
 * side waits until both servers are idle. Counted: the `daemon.triggered` event rows committed
 * for the round's daemon against the 202s the clients got.
 */

/** `clients` keep-alive clients posting for `seconds`: the 202s, and how many got anything else. */
async function drive(url: string, clients: number, seconds: number): Promise<{ acknowledged: number; failed: number; rate: number }> {
  // node:http with keep-alive: fetch's per-request cost would be what is measured otherwise
  const agent = new Agent({ keepAlive: true, maxSockets: clients });
  const target = new URL(url);
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
  return { acknowledged, failed, rate };
}

/** `daemon.triggered` rows committed for a daemon (read from the file, outside the measured time). */
function triggeredRows(dbPath: string, daemonId: string): number {
  const db = new Database(dbPath, { readonly: true });
  try {
    return (db.prepare("SELECT count(*) AS n FROM events WHERE daemon_id = ? AND type = 'daemon.triggered'").get(daemonId) as { n: number }).n;
  } finally {
    db.close();
  }
}

type Round = { rate: number; sent: number; arrived: number };

export async function benchDaemonTriggers(options: { clients?: number; seconds?: number; rounds?: number } = {}): Promise<BenchRow[]> {
  const clients = options.clients ?? 10;
  const seconds = options.seconds ?? 5;
  const rounds = options.rounds ?? 5;
  const home = tempHome("switchyard-bench-");
  const bareHome = tempHome("switchyard-bench-bare-");
  let server: BenchServer | undefined;
  let bare: Helper | undefined;
  try {
    server = await startBenchServer({ home });
    bare = await startHelper(join(import.meta.dirname, "bare-trigger-server.ts"), [bareHome], { bundle: true });
    const bareInfo = await bare.next<{ url: string; db: string }>();
    const api = createSwitchyardClient({ url: server.url });
    const pids = [server.pid, bare.pid];
    const ours = async (round: number): Promise<Round> => {
      const d = await api.daemons.spawn.mutate({ task: "Count triggers.", model: "mock/echo", eventQueueCapacity: 1_000_000, name: `bench-${round}` });
      const r = await drive(`${server!.url}/daemons/${d.id}/trigger`, clients, seconds);
      await api.daemons.stop.mutate({ id: d.id });
      await new Promise((resolve) => setTimeout(resolve, 100)); // the events' group commit after the last 202
      return { rate: r.rate, sent: r.acknowledged + r.failed, arrived: triggeredRows(join(home, "switchyard.db"), d.id) };
    };
    const limit = async (round: number): Promise<Round> => {
      const daemonId = `bare-${round}`;
      const r = await drive(`${bareInfo.url}/daemons/${daemonId}/trigger`, clients, seconds);
      await new Promise((resolve) => setTimeout(resolve, 100));
      return { rate: r.rate, sent: r.acknowledged + r.failed, arrived: triggeredRows(bareInfo.db, daemonId) };
    };
    const r = await interleave({ rounds, warmup: rounds > 1, settle: () => waitIdle(pids), limit, measured: ours });
    const rate = median(r.measured.map((x) => x.rate));
    const limitRate = median(r.limit.map((x) => x.rate));
    const count = addCounts("triggers", [...r.warm.limit, ...r.warm.measured, ...r.limit, ...r.measured]);
    const label = `${clients} keep-alive HTTP clients, ${seconds} s a round`;
    return [
      { bench: "daemon triggers", metric: `acknowledged (durable) triggers, ${label}`, value: `${fmt.rate(rate)} (median of ${rounds})`, goal: ">= 5,000/s", met: rate >= 5000, count },
      {
        bench: "daemon triggers",
        metric: "to a bare Fastify endpoint committing the same rows (same group commit, same clients)",
        value: `${fmt.rate(rate)} vs ${fmt.rate(limitRate)} = ${fmt.ratio(rate / limitRate)}`,
        goal: ">= 0.50x",
        met: rate / limitRate >= 0.5,
        count,
      },
    ];
  } finally {
    await server?.stop();
    await bare?.stop();
    removeHome(home);
    removeHome(bareHome);
  }
}
