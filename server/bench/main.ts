import { readFileSync, writeFileSync } from "node:fs";
import { benchAgentIngest } from "./agent-ingest";
import { benchAgentLogPage } from "./agent-log-page";
import { benchAgentScale } from "./agent-scale";
import { benchCliStep } from "./cli-step";
import { benchDaemonTriggers } from "./daemon-triggers";
import { benchDashboardLoad } from "./dashboard-load";
import { benchEventPipeline } from "./event-pipeline";
import { benchEventPipelinePg } from "./event-pipeline-pg";
import { benchFirstText } from "./first-text";
import { resetMeter } from "./load";
import { benchPlacement } from "./placement";
import { benchStrategyStream } from "./strategy-stream";
import { benchTakeover } from "./takeover";
import { benchWorkerLoss } from "./worker-loss";
import { benchWorkersScale } from "./workers-scale";
import { printTable, summary, verdict, type BenchRow } from "./table";
import { benchYardCommand } from "./yard-command";

/**
 * `npm run bench`: every speed and memory goal of Switchyard, measured on this machine, printed as
 * one table, one row per goal. `--only=<bench>[,<bench>]` runs some; `--quick` runs small sizes, one round
 * (a smoke test: it checks that what arrived is what was sent on every row; its numbers are not
 * comparable with the goals); `--json=<file>` also writes the rows with their verdicts.
 */
// Measured as `npm start` runs: production mode (payload validation is a development aid).
process.env.NODE_ENV ??= "production";
const arg = (name: string) => process.argv.find((a) => a.startsWith(`--${name}=`))?.slice(name.length + 3);
const quick = process.argv.includes("--quick");
const only = arg("only")?.split(",");
const json = arg("json");

const benches: Record<string, () => Promise<BenchRow[]>> = {
  events: () => benchEventPipeline(quick ? { events: 20_000, latencySeconds: 1, rounds: 1 } : {}),
  "events-pg": () => benchEventPipelinePg(quick ? { events: 5_000, latencySeconds: 1, rounds: 1, quick } : {}),
  strategy: () => benchStrategyStream(quick ? { deltas: 2_000, parallel: 3, rounds: 1 } : {}),
  "first-text": () => benchFirstText(quick ? { servers: 1, warm: 2, probes: 8, streaming: 2, deltas: 2_000 } : {}),
  daemons: () => benchDaemonTriggers(quick ? { seconds: 1, rounds: 1 } : {}),
  "agent-ingest": () => benchAgentIngest(quick ? { lines: 10_000, rounds: 1 } : {}),
  "agent-scale": () => benchAgentScale(quick ? { agents: 5, rate: 100, seconds: 2 } : {}),
  "cli-step": () => benchCliStep(quick ? { rounds: 1 } : {}),
  "yard-command": () => benchYardCommand(quick ? { times: 3, build: false } : {}),
  "agent-log-page": () => benchAgentLogPage(quick ? { lines: 20_000, loads: 1, scrollSeconds: 1, quick } : {}),
  dashboard: () => benchDashboardLoad(quick ? { runs: 300, agents: 60, loads: 1, quick } : {}),
  takeover: () => benchTakeover(quick ? { rounds: 1 } : {}),
  "worker-loss": () => benchWorkerLoss(quick ? { rounds: 1, build: false } : {}),
  placement: () => benchPlacement(quick ? { agents: 3, rounds: 1, build: false } : {}),
  "workers-scale": () => benchWorkersScale(quick ? { workers: 2, perWorker: 3, rate: 100, seconds: 2, rounds: 1, build: false } : {}),
};

if (only) {
  const unknown = only.filter((o) => !(o in benches));
  if (unknown.length) {
    process.stderr.write(`unknown bench ${unknown.join(", ")}; one of: ${Object.keys(benches).join(", ")}\n`);
    process.exit(2);
  }
}

const loadavg = () => readFileSync("/proc/loadavg", "utf8").split(" ")[0];
const kernelLoadBefore = loadavg();
const rows: BenchRow[] = [];
for (const [name, run] of Object.entries(benches)) {
  if (only && !only.includes(name)) continue;
  process.stderr.write(`bench: ${name}...`);
  const started = performance.now();
  const meter = resetMeter();
  // a bench that marks no measured section is measured as a whole
  meter.startWhole();
  let got: BenchRow[];
  try {
    got = await run();
  } catch (err) {
    got = [{ bench: name, metric: "the bench failed", value: String((err as Error).stack ?? err).split("\n").slice(0, 3).join(" / "), goal: "runs", met: false, count: { sent: 1, arrived: 0, unit: "benches" } }];
  }
  meter.endWhole();
  process.stderr.write(` ${((performance.now() - started) / 1000).toFixed(1)} s\n`);
  const load = meter.result();
  for (const r of got) r.load ??= load;
  rows.push(...got);
}

const kernel = `the kernel's 1-minute load average (the bench's own processes included): ${kernelLoadBefore} before, ${loadavg()} after`;
process.stdout.write(`\n${printTable(rows)}\n\n${summary(rows)}\n${kernel}${quick ? "\n(quick run: sizes below the goals', not comparable with them)" : ""}\n`);
if (json) writeFileSync(json, JSON.stringify(rows.map((r) => ({ ...r, verdict: verdict(r) })), null, 2));
process.exit(0);
