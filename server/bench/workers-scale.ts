import { createSwitchyardClient } from "../client";
import { makeRepo } from "../testing/agents-world";
import { removeHome, tempHome } from "../testing/server-harness";
import { killYardWorker, startYardWorker, type WorkerProc } from "../testing/yard-worker";
import { startBenchServer } from "./bench-server";
import { waitIdle } from "./load";
import { scaleRound, type ScaleRound } from "./scale-round";
import { addCounts, fmt, median, percentile, type BenchRow } from "./table";
import { ensureCliBundle } from "./yard-command";

/**
 * Workers scale (issue 19): the agent-scale work (`workers` x `perWorker` fake agents, `rate`
 * stamped lines/s each for `seconds`, every 10th agent followed on agents.onOutput over SSE) with
 * the agents on `workers` `yard worker` processes (own data dirs, connected over loopback; agent
 * i on worker floor(i / perWorker), so every worker has followed agents), against the same work
 * on one host (the agents on the server's machine, no worker registered), interleaved: single
 * host, workers, `rounds` times, each round on a fresh server (as the agent-scale row runs), p99s
 * compared by their medians. Counted: the lines the SSE followers got, and every agent's stored
 * lines (its log read back after the round). On this machine the workers, their agents and the
 * server share the cores, so the workers' side also pays for 4 more processes; a worker's lines
 * travel file -> worker -> notice -> the server's read call -> log -> SSE.
 */
export async function benchWorkersScale(options: { workers?: number; perWorker?: number; rate?: number; seconds?: number; rounds?: number; build?: boolean } = {}): Promise<BenchRow[]> {
  const nWorkers = options.workers ?? 4;
  const perWorker = options.perWorker ?? 25;
  const rate = options.rate ?? 200;
  const seconds = options.seconds ?? 10;
  const rounds = options.rounds ?? 3;
  const count = nWorkers * perWorker;
  // the workers run bin/yard.mjs: the bundle, as `npm start` builds it (not in --quick, beside the test suite)
  if (options.build ?? true) await ensureCliBundle();
  const repo = makeRepo("switchyard-bench-repo-");
  const round = async (withWorkers: boolean): Promise<ScaleRound> => {
    const home = tempHome("switchyard-bench-");
    const server = await startBenchServer({ home });
    const workers: WorkerProc[] = [];
    try {
      if (withWorkers) {
        const api = createSwitchyardClient({ url: server.url });
        const names = Array.from({ length: nWorkers }, (_, i) => `w${i}`);
        const tokens: string[] = [];
        for (const name of names) tokens.push((await api.workers.createToken.mutate({ name })).token);
        workers.push(...(await Promise.all(names.map((name, i) => startYardWorker(server.url, tokens[i]!, name, { capacity: perWorker })))));
      }
      return await scaleRound({ server, repo, dir: home, count, rate, seconds, countStored: true, ...(withWorkers ? { workerOf: (i: number) => `w${Math.floor(i / perWorker)}` } : {}) });
    } finally {
      for (const w of workers) {
        await killYardWorker(w);
        removeHome(w.home);
      }
      await server.stop();
      removeHome(home);
    }
  };
  try {
    // interleaved by hand (not rounds.ts's interleave, which would make a whole round, server
    // start and spawns included, the measured section): only the agents' writing is measured
    const out = { limit: [] as ScaleRound[], measured: [] as ScaleRound[] };
    for (let i = 0; i < rounds; i++) {
      await waitIdle(process.pid, 15_000);
      out.limit.push(await round(false));
      await waitIdle(process.pid, 15_000);
      out.measured.push(await round(true));
    }
    const p99 = (r: ScaleRound) => percentile([...r.latencies].sort((a, b) => a - b), 99);
    const p50 = (r: ScaleRound) => percentile([...r.latencies].sort((a, b) => a - b), 50);
    const single = median(out.limit.map(p99));
    const spread = median(out.measured.map(p99));
    const all = [...out.limit, ...out.measured];
    const sse = addCounts(`lines to SSE followers (${rounds} rounds x 2 sides)`, all.map((r) => ({ sent: r.expected, arrived: r.latencies.length })));
    const stored = addCounts(`lines stored, all agents (${rounds} rounds x 2 sides)`, all.map((r) => r.stored ?? { sent: 0, arrived: 0 }));
    const idle = all.reduce((s, r) => s + r.idle, 0);
    const each = (rs: ScaleRound[]) => rs.map((r) => p99(r).toFixed(0)).join(", ");
    return [
      {
        bench: "workers scale",
        metric: `${nWorkers} yard workers x ${perWorker} agents x ${rate} lines/s for ${seconds} s: line written -> SSE delivery p99, against the same ${count} agents on one host (interleaved, median of ${rounds})`,
        value: `${fmt.ms(spread)} (p50 ${fmt.ms(median(out.measured.map(p50)))}; one host ${fmt.ms(single)}, p50 ${fmt.ms(median(out.limit.map(p50)))}; each p99: workers ${each(out.measured)}, one host ${each(out.limit)} ms)`,
        goal: "<= one host + 50 ms",
        met: spread <= single + 50,
        count: sse,
      },
      {
        bench: "workers scale",
        metric: `every agent's lines stored, and the agents finished (both sides)`,
        value: `${idle}/${all.length * count} agents idle (server CPU, median: workers ${median(out.measured.map((r) => r.cpu)).toFixed(2)}, one host ${median(out.limit.map((r) => r.cpu)).toFixed(2)} cores)`,
        goal: `${all.length * count}/${all.length * count}`,
        met: idle === all.length * count,
        count: stored,
      },
    ];
  } finally {
    removeHome(repo);
  }
}
