import { execFile } from "node:child_process";
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { promisify } from "node:util";
import { createSwitchyardClient } from "../client";
import { CommaClient } from "../testing/comma-client";
import { makeRepo } from "../testing/agents-world";
import { fakeAgentPrompt } from "../testing/fake-agent";
import { removeHome, spawnServer, tempHome } from "../testing/server-harness";
import { fmt, type BenchRow } from "./table";

const run = promisify(execFile);

function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.floor(s.length / 2)]!;
}

/**
 * The cost of a `type: cli` step: a one-step strategy whose step is the fake agent, against
 * spawning the same fake agent directly (both create a worktree, run the CLI to its result and
 * persist its output), against `git worktree add` alone in the same repository. The goal: the
 * step's overhead over the direct spawn stays under 1.5x of one bare `git worktree add`.
 * Each is the median of `rounds` sequential runs. Both wait as a client does, on events, not by
 * polling (a poll loop costs CPU on this 2-core machine, and only the step's start returns before
 * its worktree exists): the direct spawn on the `agents.onUpdate` stream until its agent.idle, the
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
  const server = await spawnServer({ home, build: true, env: { SWITCHYARD_LOG_LEVEL: "warn", SWITCHYARD_AGENT_CLEANUP: "off", SWITCHYARD_AGENT_AUTOCOMMIT: "off" } });
  try {
    const api = createSwitchyardClient({ url: server.url });
    const bare: number[] = [];
    for (let i = 0; i < rounds; i++) {
      const t0 = performance.now();
      await run("git", ["worktree", "add", "-q", "-b", `bench/bare-${i}`, join(home, "bare", String(i)), "HEAD"], { cwd: repo });
      bare.push(performance.now() - t0);
    }
    // agents that reached idle, and who waits for which
    const idle = new Set<string>();
    const waiting = new Map<string, () => void>();
    const updates = api.agents.onUpdate.subscribe(
      {},
      {
        onData: ({ data }) => {
          for (const e of data.events) {
            const id = e.scope.agentId;
            if (e.type !== "agent.idle" || !id) continue;
            idle.add(id);
            waiting.get(id)?.();
          }
        },
      },
    );
    const untilIdle = (id: string) => (idle.has(id) ? Promise.resolve() : new Promise<void>((resolve) => waiting.set(id, resolve)));
    const ws = await CommaClient.connect(server.url);
    const direct: number[] = [];
    const step: number[] = [];
    try {
      for (let i = 0; i < rounds; i++) {
        // alternate, so drift on a busy machine hits both alike
        let t0 = performance.now();
        const agent = await api.agents.spawn.mutate({ provider: "fake", repo, prompt });
        await untilIdle(agent.id);
        direct.push(performance.now() - t0);

        t0 = performance.now();
        const prepared = await ws.request({ type: "prepare_run", strategyPath, cwd: repo });
        const runId = prepared.runId as string;
        const from = ws.frames.length;
        ws.send({ type: "start_run", runId, input: prompt });
        const end = await ws.waitFor((f) => f.runId === runId && (f.type === "strategy_completed" || f.type === "strategy_error"), 60_000, from);
        if (end.type !== "strategy_completed") throw new Error(`the run failed: ${JSON.stringify(end)}`);
        step.push(performance.now() - t0);
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
      { bench: "cli step", metric: `git worktree add alone (median of ${rounds})`, value: fmt.ms(b), goal: "-" },
      { bench: "cli step", metric: "fake agent spawned directly, to idle (worktree incl.)", value: fmt.ms(d), goal: "-" },
      { bench: "cli step", metric: "one-step strategy with that agent as a cli step, to completed", value: fmt.ms(s), goal: "-" },
      { bench: "cli step", metric: "step overhead over the direct spawn, in git worktree adds", value: `${fmt.ms(overhead)} = ${fmt.ratio(overhead / b)}`, goal: "< 1.50x", met: overhead / b < 1.5 },
    ];
  } finally {
    await server.kill("SIGTERM");
    removeHome(home);
    removeHome(repo);
  }
}
