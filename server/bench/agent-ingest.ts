import Database from "better-sqlite3";
import { createHash } from "node:crypto";
import { createReadStream, writeFileSync } from "node:fs";
import { join } from "node:path";
import { createInterface } from "node:readline";
import { createSwitchyardClient, type SwitchyardClient } from "../client";
import { makeRepo } from "../testing/agents-world";
import { fakeAgentPrompt } from "../testing/fake-agent";
import { removeHome, tempHome } from "../testing/server-harness";
import { startBenchServer, type BenchServer } from "./bench-server";
import { waitIdle } from "./load";
import { writeRecording } from "./recording";
import { interleave, sleep } from "./rounds";
import { addCounts, fmt, median, type BenchRow, type Count } from "./table";

/**
 * Agent ingest, both sides on the same recording: a realistic Claude Code session of `lines`
 * lines (recording.ts: text, thinking, tool calls and results, status lines, usage; ~1.1 KB a
 * line). The limit: readline + JSON.parse of every line of the file, in this process.
 * Switchyard: a fake agent copies the file to its stdout at disk speed (a `catFile` step, released
 * by a go-file once the agent is up and the server idle), and everything the server does until
 * every line is persisted in agent_log_chunks and published (the `agent.output_produced` events covering
 * the last line, seen on an events subscription). The two sides do not parse the same lines: the
 * server JSON-parses at ingest only the lines its provider does not call routine (`isRoutine`:
 * in this recording the status lines, about 1 in 8; in a real session also its start, result,
 * errors and rate limits) and stores routine lines (model output, tool results) raw, parsed when
 * read. The row says how many lines it parsed. Interleaved, `rounds` times each.
 * Counted: the lines stored byte for byte and announced, against the recording's.
 */

/** The limit: readline + JSON.parse of every line, in this process. */
async function bare(path: string): Promise<{ rate: number; lines: number }> {
  const started = performance.now();
  let n = 0;
  for await (const line of createInterface({ input: createReadStream(path), crlfDelay: Infinity })) {
    JSON.parse(line);
    n++;
  }
  return { rate: n / ((performance.now() - started) / 1000), lines: n };
}

/** The highest line announced by `agent.output_produced` events of one agent, as it moves. */
function followOutput(api: SwitchyardClient, agentId: string, afterId: number) {
  let announced = 0;
  const waiters: Array<{ line: number; resolve: () => void }> = [];
  const sub = api.events.onEventBatch.subscribe(
    { lastEventId: String(afterId), scope: { kind: "agent", id: agentId } },
    {
      onData: ({ data }) => {
        for (const e of data) {
          if (e.type !== "agent.output_produced") continue;
          const p = e.payload as { fromLine: number; lineCount: number };
          announced = Math.max(announced, p.fromLine + p.lineCount);
        }
        for (const w of waiters.filter((x) => announced >= x.line)) {
          waiters.splice(waiters.indexOf(w), 1);
          w.resolve();
        }
      },
    },
  );
  return {
    get announced() {
      return announced;
    },
    until: (line: number, timeoutMs: number) =>
      announced >= line
        ? Promise.resolve(true)
        : new Promise<boolean>((resolve) => {
            const timer = setTimeout(() => resolve(false), timeoutMs);
            waiters.push({ line, resolve: () => (clearTimeout(timer), resolve(true)) });
          }),
    stop: () => sub.unsubscribe(),
  };
}

/** Whether lines 1..n of the agent's stored log are the recording's, byte for byte (read from the file, after the run). */
function storedMatches(dbPath: string, agentId: string, recordingHash: string, n: number): number {
  const db = new Database(dbPath, { readonly: true });
  try {
    const hash = createHash("sha256");
    let line = 0;
    for (const row of db.prepare("SELECT first_line AS firstLine, content FROM agent_log_chunks WHERE agent_id = ? ORDER BY first_line").iterate(agentId) as Iterable<{ firstLine: number; content: string }>) {
      for (const raw of row.content.split("\n")) {
        if (line >= 1 && line <= n) hash.update(`${raw}\n`);
        line++;
      }
    }
    return hash.digest("hex") === recordingHash ? n : 0;
  } finally {
    db.close();
  }
}

async function fileHash(path: string): Promise<string> {
  const hash = createHash("sha256");
  for await (const chunk of createReadStream(path)) hash.update(chunk as Buffer);
  return hash.digest("hex");
}

async function ours(server: BenchServer, api: SwitchyardClient, repo: string, file: string, lines: number, round: number, recordingHash: string): Promise<{ rate: number; count: Count }> {
  const go = join(server.home, `go-${round}`);
  const { lastEventId } = await api.system.info.query();
  const agent = await api.agents.spawn.mutate({ provider: "fake", repo, prompt: fakeAgentPrompt("ingest", [{ waitFile: go }, { catFile: file }, { done: "copied" }]) });
  const out = followOutput(api, agent.id, Number(lastEventId));
  try {
    if (!(await out.until(1, 30_000))) throw new Error("the fake agent did not start");
    await waitIdle(server.pid);
    const started = performance.now();
    writeFileSync(go, "");
    const done = await out.until(1 + lines, 600_000);
    const seconds = (performance.now() - started) / 1000;
    // the agent finishes (its result line) before the next round; then its log is compared
    while ((await api.agents.get.query({ agentId: agent.id })).status === "running") await sleep(100);
    const stored = done ? storedMatches(join(server.home, "switchyard.db"), agent.id, recordingHash, lines) : 0;
    return { rate: lines / seconds, count: { sent: lines, arrived: Math.min(stored, out.announced - 1), unit: "lines" } };
  } finally {
    out.stop();
  }
}

export async function benchAgentIngest(options: { lines?: number; rounds?: number } = {}): Promise<BenchRow[]> {
  const lines = options.lines ?? 100_000;
  const rounds = options.rounds ?? 5;
  const home = tempHome("switchyard-bench-");
  const repo = makeRepo("switchyard-bench-repo-");
  const file = join(home, "recording.jsonl");
  let server: BenchServer | undefined;
  try {
    const info = writeRecording(file, lines);
    const recordingHash = await fileHash(file);
    server = await startBenchServer({ home });
    const api = createSwitchyardClient({ url: server.url });
    const s = server;
    const r = await interleave({
      rounds,
      warmup: rounds > 1,
      settle: () => waitIdle(s.pid),
      limit: async () => {
        const b = await bare(file);
        return { rate: b.rate, count: { sent: lines, arrived: b.lines, unit: "lines" } };
      },
      measured: (round) => ours(s, api, repo, file, lines, round, recordingHash),
    });
    const rate = median(r.measured.map((x) => x.rate));
    const limit = median(r.limit.map((x) => x.rate));
    const count = addCounts("lines", [...r.warm.measured, ...r.measured].map((x) => x.count));
    const mix = Object.entries(info.kinds)
      .map(([k, v]) => `${k} ${Math.round((v / info.lines) * 100)}%`)
      .join(", ");
    return [
      { bench: "agent ingest", metric: `recording: ${fmt.int(lines)} Claude Code lines, ${fmt.mb(info.bytes)} (${mix})`, value: `bare readline + JSON.parse of every line: ${fmt.rate(limit)}`, goal: "-" },
      {
        bench: "agent ingest",
        metric: `fake agent's stdout -> persisted + published, ${fmt.int(info.kinds.status ?? 0)} status lines parsed at ingest (routine lines stored raw), to readline + JSON.parse of every line`,
        value: `${fmt.rate(rate)} vs ${fmt.rate(limit)} = ${fmt.ratio(rate / limit)} (medians of ${rounds})`,
        goal: ">= 0.50x",
        met: rate / limit >= 0.5,
        count,
      },
    ];
  } finally {
    await server?.stop();
    removeHome(home);
    removeHome(repo);
  }
}
