import { closeSync, createReadStream, openSync, writeSync } from "node:fs";
import { join } from "node:path";
import { createInterface } from "node:readline";
import { createSwitchyardClient } from "../client";
import { makeRepo } from "../testing/agents-world";
import { fakeAgentPrompt } from "../testing/fake-agent";
import { removeHome, spawnServer, tempHome } from "../testing/server-harness";
import { fmt, type BenchRow } from "./table";

/** ~200-byte Claude-format assistant lines, as many as asked, in one file. */
function writeLines(path: string, count: number): number {
  const fd = openSync(path, "w");
  let bytes = 0;
  const filler = "x".repeat(110);
  for (let n = 0; n < count; ) {
    let batch = "";
    for (const end = Math.min(count, n + 10_000); n < end; n++) {
      batch += `{"type":"assistant","message":{"id":"msg_${n}","type":"message","role":"assistant","content":[{"type":"text","text":"line ${n} ${filler}"}]},"session_id":"s"}\n`;
    }
    bytes += Buffer.byteLength(batch);
    writeSync(fd, batch);
  }
  closeSync(fd);
  return bytes;
}

/** The bare rate: readline + JSON.parse of the same file, in this process. */
async function bare(path: string): Promise<number> {
  const started = performance.now();
  let n = 0;
  for await (const line of createInterface({ input: createReadStream(path), crlfDelay: Infinity })) {
    JSON.parse(line);
    n++;
  }
  return n / ((performance.now() - started) / 1000);
}

/**
 * Ingest: a fake agent copies a prepared file of `lines` Claude-format lines (~200 MB for 1M) to
 * its stdout at disk speed; measured until every line is parsed, persisted in agent_log_chunks and
 * announced (the agent's line count, which moves only after the commit and the event), against a
 * bare readline + JSON.parse of the same file.
 */
export async function benchAgentIngest(options: { lines?: number } = {}): Promise<BenchRow[]> {
  const lines = options.lines ?? 1_000_000;
  const home = tempHome("switchyard-bench-");
  const repo = makeRepo("switchyard-bench-repo-");
  const file = join(home, "lines.jsonl");
  const bytes = writeLines(file, lines);
  const server = await spawnServer({ home, build: true, env: { SWITCHYARD_LOG_LEVEL: "warn" } });
  try {
    const api = createSwitchyardClient({ url: server.url });
    const started = performance.now();
    const agent = await api.agents.spawn.mutate({ provider: "fake", repo, prompt: fakeAgentPrompt("ingest", [{ catFile: file }, { done: "copied" }]) });
    const target = lines + 2; // init, the copied lines, result
    let info = await api.agents.get.query({ agentId: agent.id });
    while (info.lineCount < target && performance.now() - started < 600_000) {
      await new Promise((r) => setTimeout(r, 20));
      info = await api.agents.get.query({ agentId: agent.id });
    }
    const seconds = (performance.now() - started) / 1000;
    const rate = lines / seconds;
    const bareRate = await bare(file);
    return [
      { bench: "agent ingest", metric: `bare readline + JSON.parse, ${lines.toLocaleString("en-US")} lines (${fmt.mb(bytes)})`, value: fmt.rate(bareRate), goal: "-" },
      { bench: "agent ingest", metric: "persisted + published (lifecycle lines parsed at once, text lines when read)", value: `${fmt.rate(rate)} (${seconds.toFixed(1)} s)`, goal: "-", met: info.lineCount >= target ? undefined : false },
      { bench: "agent ingest", metric: "ratio to bare", value: fmt.ratio(rate / bareRate), goal: ">= 0.50x", met: rate / bareRate >= 0.5 && info.lineCount >= target },
    ];
  } finally {
    await server.kill("SIGTERM");
    removeHome(home);
    removeHome(repo);
  }
}
