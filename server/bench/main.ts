import { benchAgentIngest } from "./agent-ingest";
import { benchAgentLogPage } from "./agent-log-page";
import { benchAgentScale } from "./agent-scale";
import { benchCliStep } from "./cli-step";
import { benchDaemonTriggers } from "./daemon-triggers";
import { benchEventPipeline } from "./event-pipeline";
import { benchStrategyStream } from "./strategy-stream";
import { printTable, type BenchRow } from "./table";

/**
 * `npm run bench`: every speed and memory goal of Switchyard, measured on this machine, printed as
 * one table. `npm run bench -- --quick` runs smaller sizes (not comparable with the goals).
 */
// Measured as `npm start` runs: production mode (payload validation is a development aid).
process.env.NODE_ENV ??= "production";
const quick = process.argv.includes("--quick");
const only = process.argv.find((a) => a.startsWith("--only="))?.slice(7);

const benches: Record<string, () => Promise<BenchRow[]>> = {
  events: () => benchEventPipeline(quick ? { events: 100_000, latencySeconds: 2 } : {}),
  strategy: () => benchStrategyStream(quick ? { deltas: 2_000, parallel: 4 } : {}),
  daemons: () => benchDaemonTriggers(quick ? { seconds: 2 } : {}),
  "agent-ingest": () => benchAgentIngest(quick ? { lines: 100_000 } : {}),
  "agent-log-page": () => benchAgentLogPage(quick ? { lines: 100_000 } : {}),
  "agent-scale": () => benchAgentScale(quick ? { agents: 20, seconds: 5 } : {}),
  "cli-step": () => benchCliStep(quick ? { rounds: 5 } : {}),
};

const rows: BenchRow[] = [];
for (const [name, run] of Object.entries(benches)) {
  if (only && only !== name) continue;
  process.stderr.write(`bench: ${name}...\n`);
  rows.push(...(await run()));
}
process.stdout.write(`\n${printTable(rows)}\n`);
const missed = rows.filter((r) => r.met === false).length;
process.stdout.write(`\n${rows.filter((r) => r.met === true).length} goals met, ${missed} missed${quick ? " (quick run: sizes below the goals')" : ""}\n`);
process.exit(0);
