import { join } from "node:path";
import { removeHome, tempHome } from "../testing/server-harness";
import { peakRss, startHelper, type Helper } from "./bench-server";
import { measured, waitIdle } from "./load";
import { interleave } from "./rounds";
import { fmt, median, type BenchRow, type Count } from "./table";

/**
 * The event pipeline: N small events published inside the server, through the bus into the store
 * and out to one SSE subscriber (a separate process), on both views: events.onEventBatch (a
 * message per commit) and events.onEvent (a message per event, what the dashboard subscribes
 * with). The limit makes the same hops without Switchyard (bare-event-server.ts: serialize, the
 * same group commit of the same rows, the same SSE bytes to the same subscriber), each in its own
 * process; the two interleaved, `rounds` times each. Then the publish -> SSE latency at a steady
 * 10,000 events/s on both views, and the server process's peak RSS.
 */

export type Mode = "batch" | "event";
type SubscriberResult = { count: number; distinct: number; firstAt: number; lastAt: number; p50: number; p99: number; samples: number };
export type Side = { helper: Helper; url: string; streamUrl: (mode: Mode, afterId: number) => string };

const HERE = import.meta.dirname;

async function subscribe(url: string, expected: number): Promise<{ result: Promise<SubscriberResult>; stop: () => Promise<void> }> {
  const sub = await startHelper(join(HERE, "sse-subscriber.ts"), [url, String(expected)], { bundle: true });
  const ready = await sub.next<{ ready?: boolean }>();
  if (!ready.ready) throw new Error("the subscriber did not start");
  return { result: sub.next<SubscriberResult>(), stop: () => sub.stop() };
}

/** What arrived, waiting at most `graceMs` past the publisher's end (then the subscriber reports what it has). */
async function collect(sub: { result: Promise<SubscriberResult>; stop: () => Promise<void> }, graceMs: number): Promise<SubscriberResult> {
  const timer = setTimeout(() => void sub.stop(), graceMs);
  try {
    return await sub.result;
  } finally {
    clearTimeout(timer);
  }
}

export async function throughput(side: Side, mode: Mode, n: number): Promise<{ rate: number; count: Count }> {
  const { lastId } = await lastIdOf(side.helper);
  const sub = await subscribe(side.streamUrl(mode, lastId), n);
  side.helper.send({ op: "burst", n });
  const { started } = await side.helper.next<{ started: number }>();
  const r = await collect(sub, 60_000);
  return { rate: r.distinct / ((r.lastAt - started) / 1000), count: { sent: n, arrived: r.distinct, unit: "events" } };
}

export async function latency(side: Side, mode: Mode, seconds: number, rate = 10_000): Promise<{ p50: number; p99: number; rate: number; count: Count }> {
  const total = seconds * rate;
  const { lastId } = await lastIdOf(side.helper);
  const sub = await subscribe(side.streamUrl(mode, lastId), total);
  side.helper.send({ op: "paced", total, rate });
  const { seconds: took } = await side.helper.next<{ seconds: number }>();
  const r = await collect(sub, 30_000);
  return { p50: r.p50, p99: r.p99, rate: total / took, count: { sent: total, arrived: r.distinct, unit: "events" } };
}

async function lastIdOf(helper: Helper): Promise<{ lastId: number }> {
  helper.send({ op: "lastId" });
  return helper.next<{ lastId: number }>();
}

/**
 * Throughput of each mode, limit and measured side interleaved `rounds` times: the medians, and
 * what arrived over every round (warm-up included) against what was sent.
 */
export async function throughputs(o: { ours: Side; bare: Side; modes: readonly Mode[]; rounds: number; n: number; settle: () => Promise<unknown> }): Promise<Record<Mode, { ours: number; bare: number; count: Count }>> {
  const results = {} as Record<Mode, { ours: number; bare: number; count: Count }>;
  for (const mode of o.modes) {
    const r = await interleave({ rounds: o.rounds, settle: o.settle, warmup: o.rounds > 1, limit: () => throughput(o.bare, mode, o.n), measured: () => throughput(o.ours, mode, o.n) });
    const all = [...r.warm.limit, ...r.warm.measured, ...r.limit, ...r.measured].map((x) => x.count);
    results[mode] = {
      ours: median(r.measured.map((x) => x.rate)),
      bare: median(r.limit.map((x) => x.rate)),
      count: { unit: "events", sent: all.reduce((s, c) => s + c.sent, 0), arrived: all.reduce((s, c) => s + c.arrived, 0) },
    };
  }
  return results;
}

export const trpcStream = (base: string) => (mode: Mode, afterId: number) =>
  `${base}/trpc/${mode === "batch" ? "events.onEventBatch" : "events.onEvent"}?input=${encodeURIComponent(JSON.stringify({ lastEventId: String(afterId) }))}`;

export async function benchEventPipeline(options: { events?: number; latencySeconds?: number; rounds?: number } = {}): Promise<BenchRow[]> {
  const n = options.events ?? 250_000;
  const rounds = options.rounds ?? 5;
  const seconds = options.latencySeconds ?? 5;
  const homes = [tempHome("switchyard-bench-"), tempHome("switchyard-bench-bare-")];
  const helpers: Helper[] = [];
  try {
    const ourHelper = await startHelper(join(HERE, "event-server.ts"), [homes[0]!], { bundle: true });
    helpers.push(ourHelper);
    const bareHelper = await startHelper(join(HERE, "bare-event-server.ts"), [homes[1]!], { bundle: true });
    helpers.push(bareHelper);
    const ours: Side = { helper: ourHelper, url: (await ourHelper.next<{ url: string }>()).url, streamUrl: () => "" };
    ours.streamUrl = trpcStream(ours.url);
    const bareUrl = (await bareHelper.next<{ url: string }>()).url;
    const bare: Side = { helper: bareHelper, url: bareUrl, streamUrl: (mode) => `${bareUrl}/sse?mode=${mode}` };
    const settle = () => waitIdle([ourHelper.pid, bareHelper.pid]);

    const results = await throughputs({ ours, bare, modes: ["batch", "event"], rounds, n, settle });
    const lat = {} as Record<Mode, Awaited<ReturnType<typeof latency>>>;
    for (const mode of ["batch", "event"] as const) {
      await settle();
      lat[mode] = await measured(() => latency(ours, mode, seconds));
    }
    const rss = peakRss(ourHelper.pid);

    const view = { batch: "batched (events.onEventBatch)", event: "per event (events.onEvent, the dashboard's)" };
    const goal = { batch: 0.5, event: 0.25 };
    const rows: BenchRow[] = [];
    for (const mode of ["batch", "event"] as const) {
      const r = results[mode];
      rows.push({
        bench: "event pipeline",
        metric: `bus -> store -> SSE, ${view[mode]}, ${fmt.int(n)} events, to a bare limit with the same hops`,
        value: `${fmt.rate(r.ours)} vs ${fmt.rate(r.bare)} = ${fmt.ratio(r.ours / r.bare)} (medians of ${rounds})`,
        goal: `>= ${goal[mode].toFixed(2)}x`,
        met: r.ours / r.bare >= goal[mode],
        count: r.count,
      });
    }
    for (const mode of ["batch", "event"] as const) {
      const l = lat[mode];
      rows.push({
        bench: "event pipeline",
        metric: `p99 publish -> SSE at ${fmt.rate(l.rate)}, ${view[mode]}`,
        value: `${fmt.ms(l.p99)} (p50 ${fmt.ms(l.p50)})`,
        goal: "< 25 ms",
        met: l.p99 < 25,
        count: l.count,
      });
    }
    rows.push({ bench: "event pipeline", metric: "server peak RSS (the server process)", value: fmt.mb(rss), goal: "-" });
    return rows;
  } finally {
    for (const h of helpers) await h.stop();
    for (const h of homes) removeHome(h);
  }
}
