/**
 * Test support: publishes `system.noted` events through the API in its own process (so the
 * publisher and the subscribers under test do not share a CPU), batches of `--batch` calls in a
 * loop, retrying through server restarts. On SIGTERM it prints `{"acknowledged": n, "seconds": s}`.
 * Usage: node --import tsx server/testing/load-publisher.ts <url> [batch]
 */
import { createSwitchyardClient } from "../client";

const [url, batchArg] = process.argv.slice(2);
if (!url) throw new Error("usage: load-publisher <url> [batch]");
const batch = Number(batchArg ?? 50);
const client = createSwitchyardClient({ url });
let acknowledged = 0;
let running = true;
const started = performance.now();
let okSince = 0;

process.on("SIGTERM", () => {
  running = false;
});

while (running) {
  const results = await Promise.allSettled(Array.from({ length: batch }, (_, i) => client.events.emit.mutate({ message: `load ${i}` })));
  let ok = 0;
  for (const r of results) if (r.status === "fulfilled") ok++;
  acknowledged += ok;
  okSince += ok;
  if (ok === 0) await new Promise((r) => setTimeout(r, 50)); // the server is restarting
  if (okSince >= 1000) {
    process.stdout.write(`${JSON.stringify({ progress: acknowledged, seconds: (performance.now() - started) / 1000 })}\n`);
    okSince = 0;
  }
}
process.stdout.write(`${JSON.stringify({ acknowledged, seconds: (performance.now() - started) / 1000 })}\n`, () => process.exit(0));
