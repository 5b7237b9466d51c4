import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { createSwitchyardClient, type SwitchyardClient } from "../client";
import { CommaClient, type Frame } from "../testing/comma-client";
import { removeHome, tempHome } from "../testing/server-harness";
import { startBenchServer, type BenchServer } from "./bench-server";
import { measured, waitIdle } from "./load";
import { sleep } from "./rounds";
import { oneRun, spawnFakeModel } from "./strategy-stream";
import { addCounts, fmt, median, percentile, type BenchRow, type Count } from "./table";

/**
 * Time to first text: start_run -> the first agent_streaming text frame on a Comma WebSocket
 * client, for a one-agent strategy answering a short text from the fake model. Alone: on
 * `servers` fresh servers, the first run (cold: providers set up on first use) and `warm` more
 * on each (median of all). Loaded: a probe run started every 250 ms (`probes` of them) while
 * `streaming` runs stream `deltas` deltas each (each restarted when it ends), p99; the streams
 * talk to a fake model server of their own (OpenAI's API), the probes to theirs, as two remote
 * APIs would answer (both fakes still share this machine's two cores with the server). Where the time
 * goes, from the run's stored events: start_run -> run.started (accepting the run), -> the first
 * run.agent_streamed (the model's first text, sent as it comes: see DeltaBatcher), -> on the client
 * (delivery). Counted: probes whose whole text arrived, and the streams' deltas.
 */

const PROBE_TEXT = "ready when you are";

type Probe = { ms: number; count: Count; runId: string; startedAt: number; problem?: string };

async function probe(c: CommaClient, strategyPath: string, cwd: string): Promise<Probe> {
  const asked = Date.now();
  let runId = "";
  let startedAt = 0;
  try {
    const prepared = await c.request({ type: "prepare_run", strategyPath, cwd }, 120_000);
    runId = prepared.runId as string;
    const at = c.frames.length;
    startedAt = Date.now();
    const started = performance.now();
    c.send({ type: "start_run", runId, input: "go" });
    const isText = (f: Frame) => f.type === "agent_streaming" && (f.event as { type?: string }).type === "text";
    await c.waitFor((f: Frame) => f.runId === runId && (isText(f) || f.type === "strategy_error"), 120_000, at);
    const ms = performance.now() - started;
    const end = await c.waitFor((f: Frame) => f.runId === runId && (f.type === "strategy_completed" || f.type === "strategy_error"), 120_000, at);
    const text = c.frames
      .slice(at)
      .filter((f) => f.runId === runId && isText(f))
      .map((f) => (f.event as { text: string }).text)
      .join("");
    const ok = end.type === "strategy_completed" && text === PROBE_TEXT;
    const problem = ok ? undefined : end.type !== "strategy_completed" ? `${end.type}: ${JSON.stringify(end.error ?? {})}` : `text ${JSON.stringify(text)}`;
    return { ms, runId, startedAt, count: { sent: 1, arrived: ok ? 1 : 0, unit: "probes", ...(ok || text.length === 0 ? {} : { intact: false }) }, ...(problem ? { problem } : {}) };
  } catch {
    const mine = runId ? c.frames.filter((f) => f.runId === runId).map((f) => f.type) : [];
    const problem = `${runId ? "start_run" : "prepare_run"} unanswered after ${((Date.now() - asked) / 1000).toFixed(0)} s (this run's frames: ${mine.join(", ") || "none"})`;
    return { ms: Number.POSITIVE_INFINITY, runId, startedAt, count: { sent: 1, arrived: 0, unit: "probes" }, problem };
  }
}

/** start_run -> run.started -> first run.agent_streamed, from the stored events (ms, ISO stamps). */
async function breakdown(api: SwitchyardClient, p: Probe): Promise<{ accept: number; model: number; delivery: number } | undefined> {
  if (!p.runId || !Number.isFinite(p.ms)) return undefined;
  const { events } = await api.events.list.query({ scope: { kind: "run", id: p.runId }, afterId: 0, limit: 200 });
  const at = (type: string) => {
    const e = events.find((x) => x.type === type && (type !== "run.agent_streamed" || (x.payload as { event?: { type?: string } }).event?.type === "text"));
    return e ? Date.parse(e.ts) : undefined;
  };
  const started = at("run.started");
  const streamed = at("run.agent_streamed");
  if (started === undefined || streamed === undefined) return undefined;
  return { accept: started - p.startedAt, model: streamed - started, delivery: p.startedAt + p.ms - streamed };
}

/** The first probe that did not get its whole text, and why. */
function problems(probes: Probe[]): string {
  const bad = probes.filter((p) => p.problem);
  return bad.length ? `; ${bad.length} probe(s) without their text, e.g. ${bad[0]!.problem!.slice(0, 200)}` : "";
}

function strategy(dir: string, name: string, model: string, systemPrompt: string): string {
  const path = join(dir, `${name}.yaml`);
  writeFileSync(path, `name: ${name}\nversion: "1.0"\nagents:\n  talker: {model: ${model}, systemPrompt: "${systemPrompt}"}\nflow: {type: sequential, steps: [{agent: talker}]}\n`);
  return path;
}

export async function benchFirstText(options: { servers?: number; warm?: number; probes?: number; streaming?: number; deltas?: number } = {}): Promise<BenchRow[]> {
  const servers = options.servers ?? 5;
  const warm = options.warm ?? 3;
  const probes = options.probes ?? 100;
  const streaming = options.streaming ?? 20;
  const deltas = options.deltas ?? 20_000;
  // the probes' model and the streams' are two fake servers (Anthropic's API and OpenAI's), as
  // two remote APIs would be: a probe never waits behind the streams in the fake itself
  const fake = await spawnFakeModel();
  const streamsFake = await spawnFakeModel();
  const cwd = tempHome("switchyard-bench-cwd-");
  const probePath = strategy(cwd, "probe", "anthropic/claude-bench", `SAY[${PROBE_TEXT}]`);
  const streamPath = strategy(cwd, "stream", "openai/gpt-bench", `LONG[${deltas}]`);
  const homes: string[] = [];
  const env = { ANTHROPIC_BASE_URL: fake.url, ANTHROPIC_API_KEY: "bench", OPENAI_BASE_URL: streamsFake.url, OPENAI_API_KEY: "bench" };
  const start = async () => {
    const home = tempHome("switchyard-bench-");
    homes.push(home);
    return startBenchServer({ home, env });
  };
  let server: BenchServer | undefined;
  const clients: CommaClient[] = [];
  try {
    // alone: cold (the server's first run) and warm
    const cold: Probe[] = [];
    const warmed: Probe[] = [];
    const parts: Array<{ accept: number; model: number; delivery: number }> = [];
    for (let s = 0; s < servers; s++) {
      server = await start();
      const api = createSwitchyardClient({ url: server.url });
      const c = await CommaClient.connect(server.url);
      clients.push(c);
      for (let i = 0; i <= warm; i++) {
        await waitIdle(server.pid);
        const p = await measured(() => probe(c, probePath, cwd));
        (i === 0 ? cold : warmed).push(p);
        const b = await breakdown(api, p);
        if (b) parts.push(b);
      }
      c.close();
      await server.stop();
      server = undefined;
    }
    const alone = [...cold, ...warmed];

    // loaded: probes every 250 ms while `streaming` runs stream
    server = await start();
    const s = server;
    const streams = await Promise.all(Array.from({ length: streaming }, () => CommaClient.connect(s.url)));
    const probeClient = await CommaClient.connect(s.url);
    clients.push(...streams, probeClient);
    let streamingOn = true;
    const streamed: Count[] = [];
    const keepStreaming = async (c: CommaClient) => {
      while (streamingOn) streamed.push((await oneRun(c, streamPath, cwd, deltas)).count);
    };
    const background = streams.map((c) => keepStreaming(c));
    const loaded = await measured(async () => {
      await sleep(1000); // every stream under way
      const out: Array<Promise<Probe>> = [];
      const t0 = performance.now();
      for (let i = 0; i < probes; i++) {
        const due = t0 + i * 250;
        if (due > performance.now()) await sleep(due - performance.now());
        out.push(probe(probeClient, probePath, cwd));
      }
      return Promise.all(out);
    });
    streamingOn = false;
    await Promise.all(background);
    const loadedParts = (await Promise.all(loaded.map((p) => breakdown(createSwitchyardClient({ url: s.url }), p)))).filter((b) => b !== undefined);

    const aloneMs = median(alone.map((p) => p.ms));
    type Part = { accept: number; model: number; delivery: number };
    const m = (k: keyof Part, of: Part[] = parts) => fmt.ms(median(of.map((p) => p[k])));
    const sorted = loaded.map((p) => p.ms).sort((a, b) => a - b);
    const p99 = percentile(sorted, 99);
    return [
      {
        bench: "first text",
        metric: `start_run -> first agent_streaming text frame, alone (median of ${alone.length}: ${cold.length} cold, ${warmed.length} warm)`,
        value: `${fmt.ms(aloneMs)}${problems(alone)} (cold ${fmt.ms(median(cold.map((p) => p.ms)))}, warm ${fmt.ms(median(warmed.map((p) => p.ms)))}; accept ${m("accept")}, model to first text ${m("model")}, delivery ${m("delivery")})`,
        goal: "< 50 ms",
        met: aloneMs < 50,
        count: addCounts("probes", alone.map((p) => p.count)),
      },
      {
        bench: "first text",
        metric: `start_run -> first text, a probe every 250 ms while ${streaming} runs stream ${fmt.int(deltas)} deltas each`,
        value: `p99 ${fmt.ms(p99)} (p50 ${fmt.ms(percentile(sorted, 50))}, ${loaded.length} probes; medians: accept ${m("accept", loadedParts)}, model to first text ${m("model", loadedParts)}, delivery ${m("delivery", loadedParts)})${problems(loaded)}`,
        goal: "p99 < 250 ms",
        met: p99 < 250,
        count: addCounts("probes + stream deltas", [...loaded.map((p) => p.count), ...streamed]),
      },
    ];
  } finally {
    for (const c of clients) c.close();
    await server?.stop();
    fake.close();
    streamsFake.close();
    for (const h of homes) removeHome(h);
    removeHome(cwd);
  }
}
