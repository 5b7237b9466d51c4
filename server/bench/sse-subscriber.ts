export {};
/**
 * A separate process that subscribes to events.onEventBatch (or events.onEvent) over SSE (raw fetch + a minimal SSE parser,
 * so the client is not the bottleneck) and reports, for `system.noted` events carrying a publish
 * time in `data.t`, the delivery latency. Args: url, expected count. Prints one JSON line.
 */
const [url, expectedArg, afterArg, procedure = "events.onEventBatch"] = process.argv.slice(2);
const expected = Number(expectedArg);
const input = encodeURIComponent(JSON.stringify({ lastEventId: afterArg ?? null }));
const now = () => performance.timeOrigin + performance.now();

const res = await fetch(`${url}/trpc/${procedure}?input=${input}`, { headers: { accept: "text/event-stream" } });
if (!res.ok || !res.body) throw new Error(`subscribe failed: ${res.status}`);
process.stdout.write(`${JSON.stringify({ ready: true })}\n`);

const latencies: number[] = [];
let count = 0;
let firstAt = 0;
let lastAt = 0;
let buffer = "";
const decoder = new TextDecoder();
const reader = res.body.getReader();
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
    if (!dataLine || !block.includes("\nid: ") && !block.startsWith("id: ")) continue;
    type Ev = { type: string; payload: { data?: { t?: number } } };
    const data = JSON.parse(dataLine.slice(6)) as Ev | Ev[];
    const t = now();
    for (const event of Array.isArray(data) ? data : [data]) {
      if (event.type !== "system.noted") continue;
      if (count === 0) firstAt = t;
      lastAt = t;
      const sent = event.payload.data?.t;
      if (typeof sent === "number") latencies.push(t - sent);
      if (++count >= expected) break outer;
    }
  }
}
await reader.cancel().catch(() => {});
latencies.sort((a, b) => a - b);
const pct = (p: number) => (latencies.length ? latencies[Math.min(latencies.length - 1, Math.ceil((p / 100) * latencies.length) - 1)]! : NaN);
process.stdout.write(`${JSON.stringify({ count, firstAt, lastAt, p50: pct(50), p99: pct(99), samples: latencies.length })}\n`, () => process.exit(0));
