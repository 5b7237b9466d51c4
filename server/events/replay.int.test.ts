import { spawn } from "node:child_process";
import { join } from "node:path";
import { createInterface } from "node:readline";
import { afterAll, describe, expect, it } from "vitest";
import { createSwitchyardClient, type SwitchyardClient } from "../client";
import { removeHome, spawnServer, tempHome, type ServerProcess } from "../testing/server-harness";

/**
 * Replay under load: while events are published at 1,000/s or more, several subscribers join with
 * random lastEventIds and the server is restarted once; each sees contiguous ids, no gap, no
 * duplicate.
 */

const home = tempHome();
let server: ServerProcess | undefined;

afterAll(async () => {
  await server?.kill("SIGKILL");
  removeHome(home);
});

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

type Sub = { from: number; ids: number[]; errors: unknown[]; stop: () => void };

/** Even subscribers use events.onEvent (one event a message), odd ones events.onEventBatch. */
function subscribe(client: SwitchyardClient, from: number, batched: boolean): Sub {
  const sub: Sub = { from, ids: [], errors: [], stop: () => {} };
  const handlers = { onError: (e: unknown) => sub.errors.push(e) };
  const s = batched
    ? client.events.onEventBatch.subscribe({ lastEventId: String(from) }, { ...handlers, onData: (d) => d.data.forEach((e) => sub.ids.push(e.id)) })
    : client.events.onEvent.subscribe({ lastEventId: String(from) }, { ...handlers, onData: (d) => sub.ids.push(d.data.id) });
  sub.stop = () => s.unsubscribe();
  return sub;
}

describe("event replay", () => {
  it("gives every subscriber contiguous ids across load and a restart", async () => {
    server = await spawnServer({ home });
    const url = server.url;
    const port = server.port;
    const client = createSwitchyardClient({ url });

    // the publisher runs in its own process
    const publisher = spawn(process.execPath, ["--import", "tsx", join(import.meta.dirname, "..", "testing", "load-publisher.ts"), url, "50"], { stdio: ["ignore", "pipe", "inherit"] });
    const lines: Array<{ progress?: number; acknowledged?: number; seconds: number }> = [];
    createInterface({ input: publisher.stdout! }).on("line", (l) => lines.push(JSON.parse(l)));
    const publisherDone = new Promise((r) => publisher.once("exit", r));
    while (lines.length === 0) await sleep(50);

    const subs: Sub[] = [];
    for (let i = 0; i < 3; i++) {
      await sleep(400);
      const info = await client.system.info.query();
      subs.push(subscribe(createSwitchyardClient({ url }), Math.floor(Math.random() * info.lastEventId), i % 2 === 1));
    }
    // the load is counted, not timed (speed goals live in `npm run bench`): restart once 1,500 are in
    const progress = () => lines.at(-1)?.progress ?? lines.at(-1)?.acknowledged ?? 0;
    for (const deadline = Date.now() + 60_000; progress() < 1500 && Date.now() < deadline; ) await sleep(50);

    // restart once, on the same port and data dir, while publishing goes on
    await server.kill("SIGTERM");
    await sleep(300);
    server = await spawnServer({ home, port });
    for (let i = 0; i < 2; i++) {
      await sleep(400);
      const info = await client.system.info.query();
      subs.push(subscribe(createSwitchyardClient({ url }), Math.floor(Math.random() * info.lastEventId), i % 2 === 0));
    }
    // and stop publishing once 3,000 were acknowledged
    for (const deadline = Date.now() + 60_000; progress() < 3000 && Date.now() < deadline; ) await sleep(50);
    publisher.kill("SIGTERM");
    await publisherDone;
    const acknowledged = lines.at(-1)?.acknowledged ?? 0;

    const { lastEventId } = await client.system.info.query();
    const deadline = Date.now() + 30_000;
    while (Date.now() < deadline && subs.some((s) => s.ids.at(-1) !== lastEventId)) await sleep(100);
    for (const s of subs) s.stop();

    expect(acknowledged).toBeGreaterThanOrEqual(3000);
    for (const s of subs) {
      const expected = Array.from({ length: lastEventId - s.from }, (_, i) => s.from + 1 + i);
      expect(s.ids.length, `subscriber from ${s.from}`).toBe(expected.length);
      expect(s.ids).toEqual(expected);
    }
    // the early subscribers lived through the restart
    expect(subs.slice(0, 3).every((s) => s.ids.length > 0)).toBe(true);
  });
});
