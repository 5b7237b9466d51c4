import { makeRepo } from "../testing/agents-world";
import { removeHome, tempHome } from "../testing/server-harness";
import { peakRss, startBenchServer } from "./bench-server";
import { scaleRound } from "./scale-round";
import { fmt, percentile, type BenchRow } from "./table";

/**
 * Scale: `agents` fake agents in worktrees write `rate` stamped lines per second each for
 * `seconds`; the server's peak RSS and CPU, and the latency from a line written (its stamp) to its
 * delivery on an `agents.onOutput` SSE subscription (every 10th agent followed), p50 and p99.
 */
export async function benchAgentScale(options: { agents?: number; rate?: number; seconds?: number } = {}): Promise<BenchRow[]> {
  const count = options.agents ?? 100;
  const rate = options.rate ?? 200;
  const seconds = options.seconds ?? 10;
  const home = tempHome("switchyard-bench-");
  const repo = makeRepo("switchyard-bench-repo-");
  const server = await startBenchServer({ home, env: process.env.BENCH_SERVER_NODE_OPTIONS ? { NODE_OPTIONS: process.env.BENCH_SERVER_NODE_OPTIONS } : {} });
  try {
    const round = await scaleRound({ server, repo, dir: home, count, rate, seconds });
    const rss = peakRss(server.pid);
    const sorted = round.latencies.sort((a, b) => a - b);
    const delivered = { sent: round.expected, arrived: sorted.length, unit: `lines to ${round.watched} SSE followers` };
    return [
      { bench: "agent scale", metric: `${count} agents x ${rate} lines/s for ${seconds} s: finished`, value: `${round.idle}/${count} agents idle (server CPU ${round.cpu.toFixed(2)} cores on average)`, goal: `${count}/${count}`, met: round.idle === count, count: delivered },
      { bench: "agent scale", metric: "server peak RSS (the server process)", value: fmt.mb(rss), goal: "< 400 MB", met: rss < 400 * 1024 * 1024 },
      { bench: "agent scale", metric: "line written -> SSE delivery p99", value: `${fmt.ms(percentile(sorted, 99))} (p50 ${fmt.ms(percentile(sorted, 50))})`, goal: "< 50 ms", met: percentile(sorted, 99) < 50, count: delivered },
    ];
  } finally {
    await server.stop();
    removeHome(home);
    removeHome(repo);
  }
}
