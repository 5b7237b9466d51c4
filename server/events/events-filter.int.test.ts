import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { BusEvent } from "../../shared/events";
import { startTestServer, type TestServer } from "../testing/server-harness";

/**
 * events.onEvent / onEventBatch `types`: only the events asked for, by today's name or the old
 * one of a renamed event, also for events stored under the old name.
 */
let t: TestServer;
beforeAll(async () => {
  t = await startTestServer();
  // an event a server of before the renames stored: agent.idle, read back as agent.went_idle
  await t.server.store.events.append([{ id: 0, ts: Date.now(), type: "agent.idle", scope: { agentId: "old-agent" }, payloadJson: '{"result":null}' }]);
  await t.client.events.emit.mutate({ message: "after" });
});
afterAll(() => t.server.stop());

function collect(batched: boolean, types: string[], count: number): Promise<BusEvent[]> {
  return new Promise((resolve, reject) => {
    const seen: BusEvent[] = [];
    const take = (events: BusEvent[]) => {
      seen.push(...events);
      if (seen.length >= count) {
        sub.unsubscribe();
        resolve(seen);
      }
    };
    const handlers = { onError: reject };
    const sub = batched
      ? t.client.events.onEventBatch.subscribe({ lastEventId: "0", types }, { ...handlers, onData: (d) => take(d.data) })
      : t.client.events.onEvent.subscribe({ lastEventId: "0", types }, { ...handlers, onData: (d) => take([d.data]) });
  });
}

describe("a subscription's type filter", () => {
  it.each([false, true])("takes old and new names and yields only those types (batched: %s)", async (batched) => {
    const events = await collect(batched, ["agent.idle", "system.noted"], 2);
    expect(events.map((e) => e.type)).toEqual(["agent.went_idle", "system.noted"]);
    const byNewName = await collect(batched, ["agent.went_idle"], 1);
    expect(byNewName.map((e) => [e.type, e.scope.agentId])).toEqual([["agent.went_idle", "old-agent"]]);
  });

  it("refuses a name that is no event's, naming it", async () => {
    await expect(collect(false, ["agent.napping"], 1)).rejects.toThrow(/agent\.napping/);
  });
});
