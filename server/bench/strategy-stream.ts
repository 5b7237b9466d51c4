import { spawn } from "node:child_process";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { createInterface } from "node:readline";
import { longDeltas } from "../models/script";
import { CommaClient, type Frame } from "../testing/comma-client";
import { removeHome, tempHome } from "../testing/server-harness";
import { peakRss, startBenchServer, startHelper, type BenchServer, type Helper } from "./bench-server";
import { waitIdle } from "./load";
import { interleave } from "./rounds";
import { addCounts, fmt, median, type BenchRow, type Count } from "./table";

/**
 * A strategy whose one agent streams `deltas` text deltas from the fake model ("t0 ", "t1 ", ...),
 * delivered as agent_streaming frames to a Comma WebSocket client: deltas per second from
 * start_run to strategy_completed, against the limit making the same hops without Switchyard
 * (bare-stream-server.ts: streamText from the same fake, the same joining, a row per event in
 * the same group commit, a frame per event once committed, to the same client). Interleaved,
 * `rounds` times each, both warm. Then `parallel` such runs at once, with the server process's
 * peak RSS. Counted on every run (the warm-up ones too): the text the client got, joined, against
 * what the fake sent.
 */

/** The fake model server in its own process, so it does not share a CPU with what is measured. */
export async function spawnFakeModel(): Promise<{ url: string; close: () => void }> {
  const child = spawn(process.execPath, ["--import", "tsx", join(import.meta.dirname, "..", "testing", "fake-model", "cli.ts"), "--port", "0"], { stdio: ["ignore", "pipe", "inherit"] });
  const first = await createInterface({ input: child.stdout! })[Symbol.asyncIterator]().next();
  const { url } = JSON.parse(String(first.value)) as { url: string };
  return { url, close: () => child.kill("SIGTERM") };
}

/** A stand-in between the server and the model (tests): e.g. one that loses a delta. */
export type ModelInterposer = (modelUrl: string) => Promise<{ url: string; close: () => void }>;

/** What arrived of the fake's text: deltas (its "tN " tokens) and whether the joined text is exactly what it sent. */
export function countText(frames: Frame[], deltas: number): Count {
  const text = frames
    .filter((f) => f.type === "agent_streaming" && (f.event as { type?: string } | undefined)?.type === "text")
    .map((f) => (f.event as { text: string }).text)
    .join("");
  const sent = longDeltas(deltas).join("");
  return { unit: "deltas", sent: deltas, arrived: text.split(" ").filter(Boolean).length, intact: text === sent };
}

export async function oneRun(c: CommaClient, strategyPath: string, cwd: string, deltas: number): Promise<{ ms: number; frames: number; count: Count }> {
  const prepared = await c.request({ type: "prepare_run", strategyPath, cwd }, 120_000);
  const runId = prepared.runId as string;
  const at = c.frames.length;
  const started = performance.now();
  c.send({ type: "start_run", runId, input: "go" });
  const end = await c.waitFor((f: Frame) => f.runId === runId && (f.type === "strategy_completed" || f.type === "strategy_error"), 600_000, at);
  const ms = performance.now() - started;
  if (end.type !== "strategy_completed") throw new Error(`run failed: ${JSON.stringify(end)}`);
  const frames = c.frames.slice(at).filter((f) => f.runId === runId);
  // a run's frames are kept no longer than needed (20 parallel runs of 20,000 deltas add up)
  c.frames.splice(at);
  return { ms, frames: frames.filter((f) => f.type === "agent_streaming").length, count: countText(frames, deltas) };
}

export async function benchStrategyStream(options: { deltas?: number; parallel?: number; rounds?: number; interposeModel?: ModelInterposer } = {}): Promise<BenchRow[]> {
  const deltas = options.deltas ?? 20_000;
  const parallel = options.parallel ?? 20;
  const rounds = options.rounds ?? 5;
  const fake = await spawnFakeModel();
  const between = options.interposeModel ? await options.interposeModel(fake.url) : undefined;
  const home = tempHome("switchyard-bench-");
  const bareHome = tempHome("switchyard-bench-bare-");
  const cwd = tempHome("switchyard-bench-cwd-");
  const strategyPath = join(cwd, "stream.yaml");
  writeFileSync(strategyPath, `name: Stream\nversion: "1.0"\nagents:\n  talker: {model: anthropic/claude-bench, systemPrompt: "LONG[${deltas}]"}\nflow: {type: sequential, steps: [{agent: talker}]}\n`);
  let server: BenchServer | undefined;
  let bare: Helper | undefined;
  const clients: CommaClient[] = [];
  try {
    server = await startBenchServer({ home, env: { ANTHROPIC_BASE_URL: between?.url ?? fake.url, ANTHROPIC_API_KEY: "bench" } });
    bare = await startHelper(join(import.meta.dirname, "bare-stream-server.ts"), [bareHome, fake.url, String(deltas)], { bundle: true });
    const bareUrl = (await bare.next<{ url: string }>()).url;
    const ours = await CommaClient.connect(server.url);
    const limit = await CommaClient.connect(bareUrl);
    clients.push(ours, limit);
    const pids = [server.pid, bare.pid];
    const r = await interleave({
      rounds,
      warmup: rounds > 1,
      settle: () => waitIdle(pids),
      limit: () => oneRun(limit, strategyPath, cwd, deltas),
      measured: () => oneRun(ours, strategyPath, cwd, deltas),
    });
    const rate = median(r.measured.map((x) => deltas / (x.ms / 1000)));
    const limitRate = median(r.limit.map((x) => deltas / (x.ms / 1000)));
    const frames = median(r.measured.map((x) => x.frames));

    await waitIdle(pids);
    const many = await Promise.all(Array.from({ length: parallel }, () => CommaClient.connect(server!.url)));
    clients.push(...many);
    const startedAll = performance.now();
    const results = await Promise.allSettled(many.map((cl) => oneRun(cl, strategyPath, cwd, deltas)));
    const allMs = performance.now() - startedAll;
    const ok = results.filter((x) => x.status === "fulfilled").length;
    const rss = peakRss(server.pid);
    const parallelCount = addCounts(
      "deltas",
      results.map((x) => (x.status === "fulfilled" ? x.value.count : { sent: deltas, arrived: 0 })),
    );
    const count = addCounts("deltas", [...r.warm.measured, ...r.measured].map((x) => x.count));
    return [
      {
        bench: "strategy stream",
        metric: `${fmt.int(deltas)} model deltas -> WS client, start_run -> strategy_completed, to a bare limit with the same hops`,
        value: `${fmt.rate(rate)} vs ${fmt.rate(limitRate)} = ${fmt.ratio(rate / limitRate)} (medians of ${rounds}; ${fmt.int(frames)} frames a run)`,
        goal: ">= 0.70x",
        met: rate / limitRate >= 0.7,
        count,
      },
      { bench: "strategy stream", metric: `${parallel} runs in parallel`, value: `${ok}/${parallel} completed in ${fmt.ms(allMs)}`, goal: `${parallel}/${parallel}`, met: ok === parallel, count: parallelCount },
      { bench: "strategy stream", metric: `server peak RSS (the server process), ${parallel} runs in parallel`, value: fmt.mb(rss), goal: "< 300 MB", met: rss < 300 * 1024 * 1024 },
    ];
  } finally {
    for (const c of clients) c.close();
    await server?.stop();
    await bare?.stop();
    between?.close();
    fake.close();
    removeHome(home);
    removeHome(bareHome);
    removeHome(cwd);
  }
}
