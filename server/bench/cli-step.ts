import { execFile } from "node:child_process";
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { promisify } from "node:util";
import { createSwitchyardClient } from "../client";
import { makeRepo } from "../testing/agents-world";
import { fakeAgentPrompt } from "../testing/fake-agent";
import { removeHome, spawnServer, tempHome } from "../testing/server-harness";
import { fmt, type BenchRow } from "./table";

const run = promisify(execFile);

function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.floor(s.length / 2)]!;
}

async function until(check: () => Promise<boolean>, timeoutMs = 60_000): Promise<void> {
  const deadline = performance.now() + timeoutMs;
  while (!(await check())) {
    if (performance.now() > deadline) throw new Error("timed out");
    await new Promise((r) => setTimeout(r, 5));
  }
}

/**
 * The cost of a `type: cli` step: a one-step strategy whose step is the fake agent, against
 * spawning the same fake agent directly (both create a worktree, run the CLI to its result and
 * persist its output), against `git worktree add` alone in the same repository. The goal: the
 * step's overhead over the direct spawn stays under 1.5x of one bare `git worktree add`.
 * Each is the median of `rounds` sequential runs; both poll for the end every 5 ms.
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
  const server = await spawnServer({ home, build: true, env: { SWITCHYARD_LOG_LEVEL: "warn", SWITCHYARD_AGENT_CLEANUP: "off" } });
  try {
    const api = createSwitchyardClient({ url: server.url });
    const bare: number[] = [];
    for (let i = 0; i < rounds; i++) {
      const t0 = performance.now();
      await run("git", ["worktree", "add", "-q", "-b", `bench/bare-${i}`, join(home, "bare", String(i)), "HEAD"], { cwd: repo });
      bare.push(performance.now() - t0);
    }
    const direct: number[] = [];
    const step: number[] = [];
    for (let i = 0; i < rounds; i++) {
      // alternate, so drift on a busy machine hits both alike
      let t0 = performance.now();
      const agent = await api.agents.spawn.mutate({ provider: "fake", repo, prompt });
      await until(async () => (await api.agents.get.query({ agentId: agent.id })).status === "idle");
      direct.push(performance.now() - t0);

      t0 = performance.now();
      const { runId } = await api.runs.prepare.mutate({ strategyPath, cwd: repo });
      await api.runs.start.mutate({ runId, input: prompt });
      await until(async () => {
        const r = await api.runs.get.query({ runId });
        if (r.status === "error" || r.status === "cancelled") throw new Error(`the run ended ${r.status}: ${JSON.stringify(r.error)}`);
        return r.status === "completed";
      });
      step.push(performance.now() - t0);
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
