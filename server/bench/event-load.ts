/**
 * The event pipeline's load, the same for Switchyard and for its bare limit (event-server.ts,
 * bare-event-server.ts): both publish from inside the server process, with the same loop.
 */
export type Publish = (payload: { message: string; data: Record<string, number> }) => void;

export const now = () => performance.timeOrigin + performance.now();
const tick = () => new Promise<void>((r) => setImmediate(r));

/** `n` events as fast as the loop goes (5,000 per event-loop turn); returns when it started. */
export async function burst(publish: Publish, n: number): Promise<{ started: number }> {
  const started = now();
  for (let i = 0; i < n; ) {
    const end = Math.min(n, i + 5000);
    for (; i < end; i++) publish({ message: "bench", data: { i } });
    await tick();
  }
  return { started };
}

/** `total` events at a steady `rate` per second, each stamped with its publish time (`data.t`). */
export async function paced(publish: Publish, total: number, rate: number): Promise<{ started: number; seconds: number }> {
  const started = now();
  for (let sent = 0; sent < total; ) {
    const due = Math.min(total, Math.floor(((now() - started) / 1000) * rate) + 1);
    for (; sent < due; sent++) publish({ message: "bench", data: { i: sent, t: now() } });
    await new Promise((r) => setTimeout(r, 2));
  }
  return { started, seconds: (now() - started) / 1000 };
}

export type Command = { op: "burst"; n: number } | { op: "paced"; total: number; rate: number } | { op: "lastId" };

/** The helper side of the protocol: one JSON command a line on stdin, one JSON answer a line on stdout. */
export async function serve(publish: Publish, lastId: () => number, ready: Record<string, unknown>): Promise<void> {
  const { createInterface } = await import("node:readline");
  process.stdout.write(`${JSON.stringify({ ...ready, lastId: lastId() })}\n`);
  for await (const line of createInterface({ input: process.stdin })) {
    const cmd = JSON.parse(line) as Command;
    const answer = cmd.op === "burst" ? await burst(publish, cmd.n) : cmd.op === "paced" ? await paced(publish, cmd.total, cmd.rate) : {};
    process.stdout.write(`${JSON.stringify({ ...answer, lastId: lastId() })}\n`);
  }
}
