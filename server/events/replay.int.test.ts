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

function subscribe(client: SwitchyardClient, from: number): Sub {
  const sub: Sub = { from, ids: [], errors: [], stop: () => {} };
  const s = client.events.onEvent.subscribe(
    { lastEventId: String(from) },
    { onData: (d) => sub.ids.push(d.data.id), onError: (e) => sub.errors.push(e) },
  );
  sub.stop = () => s.unsubscribe();
  return sub;
}

describe("event replay", () => {
  it("gives every subscriber contiguous ids across load and a restart", async () => {
    server = await spawnServer({ home });
    const url = server.url;
    const port = server.port;
    const client = createSwitchyardClient({ url });

    let publishing = true;
    let acknowledged = 0;
    const publisher = (async () => {
      while (publishing) {
        const started = Date.now();
        const results = await Promise.allSettled(Array.from({ length: 25 }, (_, i) => client.events.emit.mutate({ message: `load ${i}` })));
        for (const r of results) {
          if (r.status === "fulfilled") acknowledged++;
        }
        await sleep(Math.max(0, 10 - (Date.now() - started)));
      }
    })();

    const subs: Sub[] = [];
    const startedAt = Date.now();
    for (let i = 0; i < 3; i++) {
      await sleep(400);
      const info = await client.system.info.query();
      subs.push(subscribe(createSwitchyardClient({ url }), Math.floor(Math.random() * info.lastEventId)));
    }
    const rate = acknowledged / ((Date.now() - startedAt) / 1000);

    // restart once, on the same port and data dir, while publishing goes on
    await server.kill("SIGTERM");
    await sleep(300);
    server = await spawnServer({ home, port });
    for (let i = 0; i < 2; i++) {
      await sleep(400);
      const info = await client.system.info.query();
      subs.push(subscribe(createSwitchyardClient({ url }), Math.floor(Math.random() * info.lastEventId)));
    }
    await sleep(500);
    publishing = false;
    await publisher;

    const { lastEventId } = await client.system.info.query();
    const deadline = Date.now() + 30_000;
    while (Date.now() < deadline && subs.some((s) => s.ids.at(-1) !== lastEventId)) await sleep(100);
    for (const s of subs) s.stop();

    expect(rate).toBeGreaterThanOrEqual(1000);
    expect(acknowledged).toBeGreaterThan(2000);
    for (const s of subs) {
      const expected = Array.from({ length: lastEventId - s.from }, (_, i) => s.from + 1 + i);
      expect(s.ids.length, `subscriber from ${s.from}`).toBe(expected.length);
      expect(s.ids).toEqual(expected);
    }
    // the early subscribers lived through the restart
    expect(subs.slice(0, 3).every((s) => s.ids.length > 0)).toBe(true);
  });
});
