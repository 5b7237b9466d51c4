export {};
/**
 * A separate process that reads an SSE stream (raw fetch + a minimal SSE parser, so the client is
 * not the bottleneck) of `system.noted` events, one event or an array of them per message: the
 * tRPC subscriptions (events.onEventBatch, events.onEvent) and the bare limit write the same
 * format. It counts the distinct events that arrived (by `data.i`), and for those carrying a
 * publish time (`data.t`) the delivery latency. Args: url, expected count. Prints
 * `{"ready": true}` once subscribed, then one JSON line with the result.
 */
const [url, expectedArg] = process.argv.slice(2);
const expected = Number(expectedArg);
const now = () => performance.timeOrigin + performance.now();

const res = await fetch(url!, { headers: { accept: "text/event-stream" } });
if (!res.ok || !res.body) throw new Error(`subscribe failed: ${res.status}`);
process.stdout.write(`${JSON.stringify({ ready: true })}\n`);

const latencies: number[] = [];
const seen = new Set<number>();
let count = 0;
let firstAt = 0;
let lastAt = 0;
let buffer = "";
const decoder = new TextDecoder();
const reader = res.body.getReader();
const pct = (p: number) => {
  const sorted = [...latencies].sort((a, b) => a - b);
  return sorted.length ? sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)]! : NaN;
};
const finish = () => {
  const result = { count, distinct: seen.size, firstAt, lastAt, p50: pct(50), p99: pct(99), samples: latencies.length };
  process.stdout.write(`${JSON.stringify(result)}\n`, () => process.exit(0));
};
// the bench gives up waiting (something was lost): report what arrived
process.on("SIGTERM", finish);
type Ev = { type: string; payload: { data?: { i?: number; t?: number } } };
outer: while (true) {
  const { value, done } = await reader.read();
  if (done) break;
  buffer += decoder.decode(value, { stream: true });
  let end = buffer.indexOf("\n\n");
  while (end !== -1) {
    const block = buffer.slice(0, end);
    buffer = buffer.slice(end + 2);
    end = buffer.indexOf("\n\n");
    const dataLine = block.split("\n").find((l) => l.startsWith("data: "));
    if (!dataLine || (!block.includes("\nid: ") && !block.startsWith("id: "))) continue;
    const data = JSON.parse(dataLine.slice(6)) as Ev | Ev[];
    const t = now();
    for (const event of Array.isArray(data) ? data : [data]) {
      if (event.type !== "system.noted") continue;
      if (count === 0) firstAt = t;
      lastAt = t;
      const { i, t: sent } = event.payload.data ?? {};
      if (typeof i === "number") seen.add(i);
      if (typeof sent === "number") latencies.push(t - sent);
      if (++count >= expected) break outer;
    }
  }
}
await reader.cancel().catch(() => {});
finish();
