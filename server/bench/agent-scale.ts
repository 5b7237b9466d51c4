import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { createSwitchyardClient } from "../client";
import { makeRepo } from "../testing/agents-world";
import { fakeAgentPrompt } from "../testing/fake-agent";
import { removeHome, tempHome } from "../testing/server-harness";
import { peakRss, startBenchServer } from "./bench-server";
import { measured } from "./load";
import { fmt, percentile, type BenchRow } from "./table";

function cpuTicks(pid: number): number {
  const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
  const f = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
  return Number(f[11]) + Number(f[12]); // utime + stime
}

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
  const pid = server.pid;
  const latencies: number[] = [];
  const subs: Array<{ unsubscribe(): void }> = [];
  try {
    const api = createSwitchyardClient({ url: server.url });
    const { lastEventId } = await api.system.info.query();
    // every agent starts writing at the same moment, once all are spawned (the steady state)
    const go = join(home, "go");
    // agents start together but not in lockstep (real agents flush whenever they have output):
    // each one's 100 ms bursts are offset by (i mod 100) ms
    const script = (i: number) => [{ waitFile: go }, { sleep: i % 100 }, { lines: { count: rate * seconds, perSecond: rate, textBytes: 100, stamp: true } }, { done: "ok" }];
    const agents = [];
    let watchedCount = 0;
    const follow = (agentId: string) =>
      subs.push(
        api.agents.onOutput.subscribe(
          { agentId, lastEventId: String(lastEventId) },
          {
            onData: ({ data }) => {
              const now = Date.now();
              for (const l of data.lines) {
                for (const e of l.events) {
                  const m = e.kind === "text" ? / t=(\d+) /.exec(e.text) : null;
                  if (m) latencies.push(now - Number(m[1]));
                }
              }
            },
          },
        ),
      );
    for (let i = 0; i < count; i++) {
      const a = await api.agents.spawn.mutate({ provider: "fake", repo, prompt: fakeAgentPrompt(`scale ${i}`, script(i)) });
      agents.push(a);
      // a dashboard watches a few agents at a time: every 10th agent is followed over SSE, from its spawn
      if (i % 10 === 0) {
        follow(a.id);
        watchedCount++;
      }
    }
    const ids = new Set(agents.map((a) => a.id));
    const { done, cpu } = await measured(async () => {
      writeFileSync(go, "");
      const cpuBefore = cpuTicks(pid);
      const t0 = performance.now();
      // one listing every 500 ms (polling each agent would be the load measured)
      let list = (await api.agents.list.query({})).items.filter((a) => ids.has(a.id));
      while (list.some((a) => a.status === "running" || a.status === "starting") && performance.now() - t0 < (seconds + 120) * 1000) {
        await new Promise((r) => setTimeout(r, 500));
        list = (await api.agents.list.query({})).items.filter((a) => ids.has(a.id));
      }
      const elapsed = (performance.now() - t0) / 1000;
      await new Promise((r) => setTimeout(r, 500));
      return { done: list, cpu: (cpuTicks(pid) - cpuBefore) / 100 / elapsed }; // cores busy on average (100 ticks/s)
    });
    const rss = peakRss(pid);
    const sorted = latencies.sort((a, b) => a - b);
    const expected = watchedCount * rate * seconds;
    const idle = done.filter((d) => d.status === "idle").length;
    const delivered = { sent: expected, arrived: sorted.length, unit: `lines to ${watchedCount} SSE followers` };
    return [
      { bench: "agent scale", metric: `${count} agents x ${rate} lines/s for ${seconds} s: finished`, value: `${idle}/${count} agents idle (server CPU ${cpu.toFixed(2)} cores on average)`, goal: `${count}/${count}`, met: idle === count, count: delivered },
      { bench: "agent scale", metric: "server peak RSS (the server process)", value: fmt.mb(rss), goal: "< 400 MB", met: rss < 400 * 1024 * 1024 },
      { bench: "agent scale", metric: "line written -> SSE delivery p99", value: `${fmt.ms(percentile(sorted, 99))} (p50 ${fmt.ms(percentile(sorted, 50))})`, goal: "< 50 ms", met: percentile(sorted, 99) < 50, count: delivered },
    ];
  } finally {
    for (const s of subs) s.unsubscribe();
    await server.stop();
    removeHome(home);
    removeHome(repo);
  }
}
