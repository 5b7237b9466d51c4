import { afterAll, describe, expect, it } from "vitest";
import { createSwitchyardClient } from "../client";
import { removeHome, spawnServer, tempHome, type ServerProcess } from "../testing/server-harness";

/**
 * "Acknowledged" means the publishing call returned. The server runs as a child process and is
 * SIGKILLed at a random moment during a burst; every id whose call returned before the kill is
 * in the store after the restart, with its payload.
 */

const home = tempHome();
let server: ServerProcess | undefined;

afterAll(async () => {
  await server?.kill("SIGKILL");
  removeHome(home);
});

describe("durability", () => {
  it("keeps every acknowledged event across kill -9", async () => {
    server = await spawnServer({ home });
    const client = createSwitchyardClient({ url: server.url });
    const acknowledged = new Map<number, string>();
    let stop = false;
    const writers = Array.from({ length: 8 }, async (_, w) => {
      for (let i = 0; !stop; i++) {
        const message = `w${w}-${i}`;
        try {
          const { id } = await client.events.emit.mutate({ message });
          acknowledged.set(id, message);
        } catch {
          return; // the server is gone
        }
      }
    });
    // a random moment, once the burst is well under way
    while (acknowledged.size < 200) await new Promise((r) => setTimeout(r, 10));
    await new Promise((r) => setTimeout(r, Math.random() * 500));
    await server.kill("SIGKILL");
    stop = true;
    await Promise.all(writers);
    expect(acknowledged.size).toBeGreaterThan(100);

    server = await spawnServer({ home, port: server.port });
    const stored = new Map<number, string>();
    for (let after = 0; ; ) {
      const page = await client.events.list.query({ afterId: after, limit: 5000 });
      if (page.events.length === 0) break;
      for (const e of page.events) if (e.type === "system.noted") stored.set(e.id, e.payload.message);
      after = page.events.at(-1)!.id;
    }
    const missing = [...acknowledged].filter(([id, message]) => stored.get(id) !== message);
    expect(missing).toEqual([]);
  });
});
