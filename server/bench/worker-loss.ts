import { readdirSync, readlinkSync } from "node:fs";
import { createSwitchyardClient } from "../client";
import { fakeAgentPrompt } from "../testing/fake-agent";
import { makeRepo } from "../testing/agents-world";
import { removeHome, tempHome } from "../testing/server-harness";
import { killYardWorker, startYardWorker, type WorkerProc } from "../testing/yard-worker";
import { startBenchServer, type BenchServer } from "./bench-server";
import { measured } from "./load";
import { sleep } from "./rounds";
import { median, type BenchRow } from "./table";
import { ensureCliBundle } from "./yard-command";

/**
 * Worker loss (issue 19): a `yard worker` (own data dir) runs an agent (the fake CLI, printing a
 * line then sleeping); kill -9 of the worker; the time until a client sees the agent
 * `interrupted` on an agents.onUpdate SSE subscription (opened before the kill, from the event id
 * read before it: nothing is missed, and it is pushed, not polled). Median of `rounds` kills, a
 * fresh worker each time, one server. Counted: the kills whose agent was seen interrupted with the
 * reason "worker <name> lost". The floor is the design's: the server pings every second and a
 * worker with no heartbeat for 11 s is lost (found by the next 1 s tick), so 11-12 s.
 */
export async function benchWorkerLoss(options: { rounds?: number; build?: boolean } = {}): Promise<BenchRow[]> {
  const rounds = options.rounds ?? 5;
  if (options.build ?? true) await ensureCliBundle();
  const home = tempHome("switchyard-bench-");
  const repo = makeRepo("switchyard-bench-repo-");
  let server: BenchServer | undefined;
  const workers: WorkerProc[] = [];
  const times: number[] = [];
  try {
    server = await startBenchServer({ home });
    const api = createSwitchyardClient({ url: server.url });
    for (let i = 0; i < rounds; i++) {
      const name = `loss${i}`;
      const { token } = await api.workers.createToken.mutate({ name });
      const worker = await startYardWorker(server.url, token, name, { capacity: 1 });
      workers.push(worker);
      const agent = await api.agents.spawn.mutate({ provider: "fake", repo, worker: name, prompt: fakeAgentPrompt(`loss ${i}`, [{ text: "working" }, { sleep: 60_000 }, { done: "never" }]) });
      // running on the worker: its first line stored
      for (let t = 0; t < 600; t++) {
        const page = await api.agents.output.query({ agentId: agent.id, limit: 50 });
        if (JSON.stringify(page.lines).includes("working")) break;
        await sleep(50);
      }
      const { lastEventId } = await api.system.info.query();
      const took = await measured(
        () =>
          new Promise<number | undefined>((resolve) => {
            let killedAt = 0;
            const timer = setTimeout(() => finish(undefined), 30_000);
            const sub = api.agents.onUpdate.subscribe(
              { lastEventId: String(lastEventId) },
              {
                onData: ({ data }) => {
                  const a = data.agents.find((x) => x.id === agent.id);
                  if (a && "status" in a && a.status === "interrupted" && /worker .* lost/.test(a.statusReason ?? "")) finish(performance.now() - killedAt);
                },
              },
            );
            function finish(ms: number | undefined) {
              clearTimeout(timer);
              sub.unsubscribe();
              resolve(ms);
            }
            killedAt = performance.now();
            worker.proc.kill("SIGKILL");
          }),
      );
      if (took !== undefined) times.push(took);
      await killYardWorker(worker);
      // the killed worker's agent process is an orphan now: end it (found by its working directory)
      killUnder(worker.home);
    }
    const ms = times.length > 0 ? median(times) : Number.NaN;
    return [
      {
        bench: "worker loss",
        metric: `kill -9 of a yard worker running an agent -> the agent seen interrupted on agents.onUpdate (SSE; median of ${rounds}, a fresh worker each; lost after 11 s without heartbeat)`,
        value: times.length > 0 ? `${(ms / 1000).toFixed(1)} s (each: ${times.map((t) => (t / 1000).toFixed(1)).join(", ")} s)` : "never seen interrupted",
        goal: "< 15 s",
        met: ms < 15_000,
        count: { sent: rounds, arrived: times.length, unit: "agents seen interrupted" },
      },
    ];
  } finally {
    for (const w of workers) {
      await killYardWorker(w);
      killUnder(w.home);
      removeHome(w.home);
    }
    await server?.stop();
    removeHome(home);
    removeHome(repo);
  }
}

/** SIGKILL the processes whose working directory is under `dir` (a killed worker's agents). */
function killUnder(dir: string): void {
  for (const entry of readdirSync("/proc")) {
    const pid = Number(entry);
    if (!Number.isInteger(pid) || pid === process.pid) continue;
    try {
      if (readlinkSync(`/proc/${pid}/cwd`).startsWith(dir)) process.kill(pid, "SIGKILL");
    } catch {
      // gone, or not ours to read
    }
  }
}
