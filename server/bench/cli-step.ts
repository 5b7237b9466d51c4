import { execFile } from "node:child_process";
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { promisify } from "node:util";
import { createSwitchyardClient } from "../client";
import { CommaClient } from "../testing/comma-client";
import { makeRepo } from "../testing/agents-world";
import { fakeAgentPrompt } from "../testing/fake-agent";
import { removeHome, tempHome } from "../testing/server-harness";
import { startBenchServer } from "./bench-server";
import { measured, waitIdle } from "./load";
import { fmt, median, type BenchRow } from "./table";

const run = promisify(execFile);

/**
 * The cost of a `type: cli` step: a one-step strategy whose step is the fake agent, against
 * spawning the same fake agent directly (both create a worktree, run the CLI to its result and
 * persist its output), against `git worktree add` alone in the same repository. The goal: the
 * step's overhead over the direct spawn stays under 1.5x of one bare `git worktree add`.
 * Each is the median of `rounds` runs, the three interleaved (bare, direct, step, bare...), each
 * once the server is idle. Both wait as a client does, on events, not by
 * polling (a poll loop costs CPU on this 2-core machine, and only the step's start returns before
 * its worktree exists): the direct spawn on the `agents.onUpdate` stream until its agent.went_idle, the
 * step over the Comma WebSocket (prepare_run, start_run) until strategy_completed.
 */
export async function benchCliStep(options: { rounds?: number } = {}): Promise<BenchRow[]> {
  const rounds = options.rounds ?? 15;
  const home = tempHome("switchyard-bench-");
  const repo = makeRepo("switchyard-bench-repo-");
  mkdirSync(join(repo, "strategies"));
  // a typical step: one file written and committed, so the hand-over summary has a diff to carry
  const prompt = fakeAgentPrompt("bench", [
    { write: { path: "change.txt", content: "one line\n" } },
    { bash: "git add -A && git -c user.name=b -c user.email=b@b commit -qm change" },
    { done: "ok" },
  ]);
  const strategyPath = join(repo, "strategies", "one-cli-step.yaml");
  writeFileSync(strategyPath, `name: One CLI step\nversion: "1"\nagents:\n  coder: {type: cli, provider: fake}\nflow: {type: sequential, steps: [{agent: coder}]}\n`);
  // cleanup off: neither side should include removing the worktree afterwards
  const server = await startBenchServer({ home, env: { SWITCHYARD_AGENT_CLEANUP: "off", SWITCHYARD_AGENT_AUTOCOMMIT: "off" } });
  try {
    const api = createSwitchyardClient({ url: server.url });
    // agents that reached idle, and who waits for which
    const idle = new Set<string>();
    const waiting = new Map<string, () => void>();
    const updates = api.agents.onUpdate.subscribe(
      {},
      {
        onData: ({ data }) => {
          for (const e of data.events) {
            const id = e.scope.agentId;
            if (e.type !== "agent.went_idle" || !id) continue;
            idle.add(id);
            waiting.get(id)?.();
          }
        },
      },
    );
    const untilIdle = (id: string) => (idle.has(id) ? Promise.resolve() : new Promise<void>((resolve) => waiting.set(id, resolve)));
    const ws = await CommaClient.connect(server.url);
    const bare: number[] = [];
    const direct: number[] = [];
    const step: number[] = [];
    let completed = 0;
    const timed = async (into: number[], fn: () => Promise<void>) => {
      await waitIdle(server.pid);
      await measured(async () => {
        const t0 = performance.now();
        await fn();
        into.push(performance.now() - t0);
      });
      completed++;
    };
    try {
      // interleaved, so drift on a busy machine hits all three alike
      for (let i = 0; i < rounds; i++) {
        await timed(bare, async () => void (await run("git", ["worktree", "add", "-q", "-b", `bench/bare-${i}`, join(home, "bare", String(i)), "HEAD"], { cwd: repo })));
        await timed(direct, async () => {
          const agent = await api.agents.spawn.mutate({ provider: "fake", repo, prompt });
          await untilIdle(agent.id);
        });
        await timed(step, async () => {
          const prepared = await ws.request({ type: "prepare_run", strategyPath, cwd: repo });
          const runId = prepared.runId as string;
          const from = ws.frames.length;
          ws.send({ type: "start_run", runId, input: prompt });
          const end = await ws.waitFor((f) => f.runId === runId && (f.type === "strategy_completed" || f.type === "strategy_error"), 60_000, from);
          if (end.type !== "strategy_completed") throw new Error(`the run failed: ${JSON.stringify(end)}`);
        });
      }
    } finally {
      updates.unsubscribe();
      ws.close();
    }
    const b = median(bare);
    const d = median(direct);
    const s = median(step);
    const overhead = s - d;
    return [
      {
        bench: "cli step",
        metric: `one-step strategy (a cli step) - the same fake agent spawned directly, in bare git worktree adds (medians of ${rounds}, interleaved)`,
        value: `${fmt.ms(s)} - ${fmt.ms(d)} = ${fmt.ms(overhead)} = ${fmt.ratio(overhead / b)} of ${fmt.ms(b)}`,
        goal: "< 1.50x",
        met: overhead / b < 1.5,
        count: { sent: rounds * 3, arrived: completed, unit: "runs" },
      },
    ];
  } finally {
    await server.stop();
    removeHome(home);
    removeHome(repo);
  }
}
