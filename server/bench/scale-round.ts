import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { createSwitchyardClient } from "../client";
import { fakeAgentPrompt } from "../testing/fake-agent";
import type { BenchServer } from "./bench-server";
import { measured } from "./load";

function cpuTicks(pid: number): number {
  const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
  const f = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
  return Number(f[11]) + Number(f[12]); // utime + stime
}

export type ScaleRound = {
  /** Line written (its stamp) -> delivered on an SSE follower, ms, unsorted. */
  latencies: number[];
  /** Agents followed over SSE (every 10th), and the stamped lines they were to deliver. */
  watched: number;
  expected: number;
  /** Agents that finished idle. */
  idle: number;
  /** The server's CPU, cores on average while the agents wrote. */
  cpu: number;
  /** With `countStored`: the distinct stamped lines stored in every agent's log, and how many were written. */
  stored?: { sent: number; arrived: number };
};

/**
 * One round of the scale benches on a running server: `count` fake agents in worktrees write
 * `rate` stamped lines per second each for `seconds`, all starting at one moment once every one
 * is spawned (the steady state); every 10th agent is followed on `agents.onOutput` over SSE from
 * its spawn, and the latency from a line's stamp to its delivery there is kept. `workerOf(i)`
 * places agent i on a worker (else the server's placement). Only the writing is a measured
 * section (spawning is setup). `countStored`: afterwards, every agent's stored log is read
 * (outside the measured section) and its distinct stamped lines counted.
 */
export async function scaleRound(options: {
  server: BenchServer;
  repo: string;
  dir: string;
  count: number;
  rate: number;
  seconds: number;
  workerOf?: (i: number) => string | undefined;
  countStored?: boolean;
}): Promise<ScaleRound> {
  const { server, repo, count, rate, seconds } = options;
  const api = createSwitchyardClient({ url: server.url });
  const latencies: number[] = [];
  const subs: Array<{ unsubscribe(): void }> = [];
  try {
    const { lastEventId } = await api.system.info.query();
    const go = join(options.dir, `go-${Date.now()}`);
    // agents start together but not in lockstep (real agents flush whenever they have output):
    // each one's 100 ms bursts are offset by (i mod 100) ms
    const script = (i: number) => [{ waitFile: go }, { sleep: i % 100 }, { lines: { count: rate * seconds, perSecond: rate, textBytes: 100, stamp: true } }, { done: "ok" }];
    const agents: Array<{ id: string }> = [];
    let watched = 0;
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
      const worker = options.workerOf?.(i);
      const a = await api.agents.spawn.mutate({ provider: "fake", repo, prompt: fakeAgentPrompt(`scale ${i}`, script(i)), ...(worker ? { worker } : {}) });
      if (a.status === "queued") throw new Error(`agent ${i} was queued: ${a.statusReason ?? ""}`);
      agents.push(a);
      // a dashboard watches a few agents at a time: every 10th agent is followed over SSE, from its spawn
      if (i % 10 === 0) {
        follow(a.id);
        watched++;
      }
    }
    const ids = new Set(agents.map((a) => a.id));
    const { done, cpu } = await measured(async () => {
      writeFileSync(go, "");
      const cpuBefore = cpuTicks(server.pid);
      const t0 = performance.now();
      // one listing every 500 ms (polling each agent would be the load measured)
      const listing = async () => (await api.agents.list.query({})).items.filter((a) => ids.has(a.id));
      let list = await listing();
      while (list.some((a) => a.status === "running" || a.status === "starting") && performance.now() - t0 < (seconds + 120) * 1000) {
        await new Promise((r) => setTimeout(r, 500));
        list = await listing();
      }
      const elapsed = (performance.now() - t0) / 1000;
      await new Promise((r) => setTimeout(r, 500));
      return { done: list, cpu: (cpuTicks(server.pid) - cpuBefore) / 100 / elapsed }; // cores busy on average (100 ticks/s)
    });
    const round: ScaleRound = { latencies, watched, expected: watched * rate * seconds, idle: done.filter((d) => d.status === "idle").length, cpu };
    if (options.countStored) round.stored = { sent: count * rate * seconds, arrived: await storedLines(api, agents, rate * seconds) };
    return round;
  } finally {
    for (const s of subs) s.unsubscribe();
  }
}

/** The distinct stamped lines ("line <n> t=") in the stored logs of `agents`. */
async function storedLines(api: ReturnType<typeof createSwitchyardClient>, agents: Array<{ id: string }>, perAgent: number): Promise<number> {
  let total = 0;
  for (const a of agents) {
    const seen = new Set<number>();
    for (let from = 0; ; from += 5000) {
      const page = await api.agents.output.query({ agentId: a.id, fromLine: from, limit: 5000, format: "events" });
      for (const l of page.lines) {
        for (const e of l.events) {
          const m = e.kind === "text" ? /^line (\d+) t=/.exec(e.text) : null;
          if (m) seen.add(Number(m[1]));
        }
      }
      if (page.lines.length < 5000 || seen.size >= perAgent) break;
    }
    total += seen.size;
  }
  return total;
}
