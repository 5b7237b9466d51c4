import { randomBytes } from "node:crypto";
import { join } from "node:path";
import { createTestDatabase, type TestDatabase } from "../testing/postgres";
import { removeHome, tempHome } from "../testing/server-harness";
import { startHelper, type Helper } from "./bench-server";
import { latency, throughputs, trpcStream, type Mode, type Side } from "./event-pipeline";
import { adopt, measured, processesNamed, waitIdle } from "./load";
import { fmt, type BenchRow } from "./table";

/**
 * The event pipeline on PostgreSQL, across servers: N small events published inside Switchyard
 * server A, through its bus into PostgreSQL (one ordered appender, one NOTIFY per committed
 * batch), and out of a second Switchyard server B on the same database (LISTEN, then B reads
 * after its cursor) to one SSE subscriber (a separate process) of B, on both views
 * (events.onEventBatch, events.onEvent). The limit makes the same hops without Switchyard, on a
 * fresh database of its own: a writer process with the same group commit of the same rows and a
 * NOTIFY per commit (bare-pg-writer.ts), a reader process on another connection that LISTENs,
 * reads the new rows by `id > cursor` and writes the same SSE bytes to the same subscriber
 * (bare-pg-reader.ts). The two interleaved, `rounds` times each. Then the publish (A) -> SSE (B)
 * latency at a steady 5,000 events/s on both views. `quick` (the smoke run: counts, not speed):
 * the batched view only, no waiting for idle processes between the sides.
 *
 * PostgreSQL is the test suite's (server/testing/postgres.ts: 127.0.0.1:5432, else a throwaway
 * cluster), two fresh databases dropped at the end. Its backends serving those databases work for
 * this bench: their CPU counts as the bench's, not as the machine's other load (load.ts `adopt`).
 */

const HERE = import.meta.dirname;
const RATE = 5_000;

export async function benchEventPipelinePg(options: { events?: number; latencySeconds?: number; rounds?: number; quick?: boolean } = {}): Promise<BenchRow[]> {
  const n = options.events ?? 50_000;
  const rounds = options.rounds ?? 5;
  const seconds = options.latencySeconds ?? 5;
  const modes: Mode[] = options.quick ? ["batch"] : ["batch", "event"];
  const homes = [tempHome("switchyard-bench-pg-a-"), tempHome("switchyard-bench-pg-b-")];
  const dbs: TestDatabase[] = [];
  const helpers: Helper[] = [];
  const unadopt = adopt(() => processesNamed(dbs.map((d) => d.name)));
  try {
    dbs.push(...(await Promise.all([createTestDatabase(), createTestDatabase()])));
    const [ourDb, bareDb] = dbs as [TestDatabase, TestDatabase];
    const env = { SWITCHYARD_DATABASE_URL: ourDb.url, SWITCHYARD_SECRET_KEY: randomBytes(36).toString("base64") };
    const bareEnv = { BENCH_BARE_PG_URL: bareDb.url };
    const start = async (file: string, args: string[], e: Record<string, string>) => {
      const h = await startHelper(join(HERE, file), args, { bundle: true, env: e });
      helpers.push(h);
      return h;
    };
    // A publishes; B (another server on the same database) serves the subscription
    const [a, b, writer] = await Promise.all([
      start("event-server.ts", [homes[0]!, "pg"], env),
      start("event-server.ts", [homes[1]!, "pg"], env),
      start("bare-pg-writer.ts", [], bareEnv),
    ]);
    // the reader once the writer has made the table
    const readerReady = writer.next<unknown>().then(async () => (await start("bare-pg-reader.ts", [], bareEnv)).next<{ url: string }>());
    const [{ url: bUrl }, { url: readerUrl }] = await Promise.all([b.next<{ url: string }>(), readerReady, a.next<unknown>()]);
    const ours: Side = { helper: a, url: bUrl, streamUrl: trpcStream(bUrl) };
    const bare: Side = { helper: writer, url: readerUrl, streamUrl: (mode) => `${readerUrl}/sse?mode=${mode}` };
    const settle = async () => (options.quick ? true : waitIdle(helpers.map((h) => h.pid)));

    const results = await throughputs({ ours, bare, modes, rounds, n, settle });
    const lat = {} as Record<Mode, Awaited<ReturnType<typeof latency>>>;
    for (const mode of modes) {
      await settle();
      lat[mode] = await measured(() => latency(ours, mode, seconds, RATE));
    }

    const view = { batch: "batched (events.onEventBatch)", event: "per event (events.onEvent, the dashboard's)" };
    const rows: BenchRow[] = [];
    for (const mode of modes) {
      const r = results[mode];
      rows.push({
        bench: "event pipeline, PostgreSQL",
        metric: `bus on server A -> PostgreSQL -> SSE on server B, ${view[mode]}, ${fmt.int(n)} events, to a bare writer + reader with the same hops`,
        value: `${fmt.rate(r.ours)} vs ${fmt.rate(r.bare)} = ${fmt.ratio(r.ours / r.bare)} (medians of ${rounds})`,
        // the goal is the batched view's; the per-event one is reported beside it
        goal: mode === "batch" ? ">= 0.50x" : "-",
        ...(mode === "batch" ? { met: r.ours / r.bare >= 0.5 } : {}),
        count: r.count,
      });
    }
    for (const mode of modes) {
      const l = lat[mode];
      rows.push({
        bench: "event pipeline, PostgreSQL",
        metric: `p99 publish on A -> SSE on B at ${fmt.rate(l.rate)}, ${view[mode]}`,
        value: `${fmt.ms(l.p99)} (p50 ${fmt.ms(l.p50)})`,
        goal: "< 50 ms",
        met: l.p99 < 50,
        count: l.count,
      });
    }
    return rows;
  } finally {
    await Promise.all(helpers.map((h) => h.stop()));
    unadopt();
    for (const d of dbs) await d.drop().catch(() => undefined);
    for (const h of homes) removeHome(h);
  }
}
