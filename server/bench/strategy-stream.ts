import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { createAnthropic } from "@ai-sdk/anthropic";
import { streamText } from "ai";
import { CommaClient, type Frame } from "../testing/comma-client";
import { spawn } from "node:child_process";
import { createInterface } from "node:readline";
import { removeHome, spawnServer, tempHome } from "../testing/server-harness";
import { fmt, type BenchRow } from "./table";

/**
 * A strategy whose agent streams N text deltas from the fake model: frames/s delivered to a
 * WebSocket client and time from start_run to strategy_completed, against a bare `streamText`
 * consuming the same fake stream in the same run; then `parallel` such runs at once, with the
 * server's peak RSS (a child process: VmHWM from /proc).
 */
function peakRss(pid: number): number {
  const status = readFileSync(`/proc/${pid}/status`, "utf8");
  const kb = Number(/VmHWM:\s+(\d+)/.exec(status)?.[1] ?? 0);
  return kb * 1024;
}

async function bareRate(baseURL: string, deltas: number): Promise<number> {
  const model = createAnthropic({ baseURL, apiKey: "bench" })("claude-bench");
  const started = performance.now();
  const result = streamText({ model, system: `LONG[${deltas}]`, prompt: "go", maxOutputTokens: 64_000 });
  let n = 0;
  for await (const part of result.fullStream) if (part.type === "text-delta") n++;
  return n / ((performance.now() - started) / 1000);
}

async function oneRun(c: CommaClient, strategyPath: string, cwd: string): Promise<{ frames: number; ms: number }> {
  const prepared = await c.request({ type: "prepare_run", strategyPath, cwd });
  const runId = prepared.runId as string;
  const at = c.frames.length;
  const started = performance.now();
  c.send({ type: "start_run", runId, input: "go" });
  const end = await c.waitFor((f: Frame) => f.runId === runId && (f.type === "strategy_completed" || f.type === "strategy_error"), 600_000, at);
  if (end.type !== "strategy_completed") throw new Error(`run failed: ${JSON.stringify(end)}`);
  const ms = performance.now() - started;
  const frames = c.frames.slice(at).filter((f) => f.runId === runId && f.type === "agent_streaming").length;
  return { frames, ms };
}

/** The fake model server in its own process, so it does not share a CPU with what is measured. */
async function spawnFakeModel(): Promise<{ url: string; baseURL: string; close: () => void }> {
  const child = spawn(process.execPath, ["--import", "tsx", join(import.meta.dirname, "..", "testing", "fake-model", "cli.ts"), "--port", "0"], { stdio: ["ignore", "pipe", "inherit"] });
  const first = await createInterface({ input: child.stdout! })[Symbol.asyncIterator]().next();
  const { url } = JSON.parse(String(first.value)) as { url: string };
  return { url, baseURL: `${url}/v1`, close: () => child.kill("SIGTERM") };
}

export async function benchStrategyStream(options: { deltas?: number; parallel?: number } = {}): Promise<BenchRow[]> {
  const deltas = options.deltas ?? 20_000;
  const parallel = options.parallel ?? 20;
  const fake = await spawnFakeModel();
  const home = tempHome("switchyard-bench-");
  const cwd = tempHome("switchyard-bench-cwd-");
  const strategyPath = join(cwd, "stream.yaml");
  writeFileSync(strategyPath, `name: Stream\nversion: "1.0"\nagents:\n  talker: {model: anthropic/claude-bench, systemPrompt: "LONG[${deltas}]"}\nflow: {type: sequential, steps: [{agent: talker}]}\n`);
  const server = await spawnServer({ home, build: true, env: { ANTHROPIC_BASE_URL: fake.url, ANTHROPIC_API_KEY: "bench", SWITCHYARD_LOG_LEVEL: "warn" } });
  try {
    // both sides measured warm (after one run each), as a long-lived server is
    await bareRate(fake.baseURL, deltas);
    const bareBefore = await bareRate(fake.baseURL, deltas);
    const c = await CommaClient.connect(server.url);
    await oneRun(c, strategyPath, cwd);
    const single = await oneRun(c, strategyPath, cwd);
    // the limit is the better of a bare run before and one after (this machine's speed drifts)
    const bare = Math.max(bareBefore, await bareRate(fake.baseURL, deltas));
    // every model delta reaches the client; consecutive ones travel joined (about one frame per 16 ms)
    const rate = deltas / (single.ms / 1000);
    const clients = await Promise.all(Array.from({ length: parallel }, () => CommaClient.connect(server.url)));
    const startedAll = performance.now();
    const results = await Promise.allSettled(clients.map((cl) => oneRun(cl, strategyPath, cwd)));
    const allMs = performance.now() - startedAll;
    const ok = results.filter((r) => r.status === "fulfilled").length;
    const rss = peakRss(server.proc.pid!);
    for (const cl of [c, ...clients]) cl.close();
    const ratio = rate / bare;
    return [
      { bench: "strategy stream", metric: `bare streamText, ${deltas.toLocaleString("en-US")} deltas (limit)`, value: fmt.rate(bare), goal: "-" },
      { bench: "strategy stream", metric: "model deltas delivered to a WS client", value: fmt.rate(rate), goal: ">= 0.7x limit", met: ratio >= 0.7 },
      { bench: "strategy stream", metric: "agent_streaming frames for them", value: single.frames.toLocaleString("en-US"), goal: "-" },
      { bench: "strategy stream", metric: "ratio to limit", value: fmt.ratio(ratio), goal: ">= 0.70x", met: ratio >= 0.7 },
      { bench: "strategy stream", metric: "start_run -> strategy_completed", value: fmt.ms(single.ms), goal: "-" },
      { bench: "strategy stream", metric: `${parallel} runs in parallel completed`, value: `${ok}/${parallel} in ${fmt.ms(allMs)}`, goal: `${parallel}/${parallel}`, met: ok === parallel },
      { bench: "strategy stream", metric: "server peak RSS", value: fmt.mb(rss), goal: "< 300 MB", met: rss < 300 * 1024 * 1024 && ok === parallel },
    ];
  } finally {
    await server.kill("SIGTERM");
    fake.close();
    removeHome(home);
    removeHome(cwd);
  }
}
