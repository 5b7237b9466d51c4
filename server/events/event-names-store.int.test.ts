import { afterAll, describe, expect, it } from "vitest";
import { RenamedEvents } from "../../shared/events";
import { STORE_KINDS, testStores } from "../testing/stores";
import { EventBus } from "./bus";

/**
 * Events stored under a name from before the past-tense renames (issue 22) read back under the
 * new name, on SQLite and on PostgreSQL: a store page, a bus replay and another server's read.
 */
const stores = testStores();
afterAll(() => stores.close());

describe.each(STORE_KINDS)("renamed events on %s", (kind) => {
  it("reads an old name as the new one, wherever the events are read from the store", async () => {
    const store = await stores.fresh(kind);
    const old = Object.keys(RenamedEvents) as Array<keyof typeof RenamedEvents>;
    const rows = old.map((type, i) => ({ id: 0, ts: 1_700_000_000_000 + i, type, scope: { agentId: "a1" }, payloadJson: JSON.stringify({ i }) }));
    await store.events.append([...rows, { id: 0, ts: 1_700_000_000_100, type: "system.noted", scope: {}, payloadJson: '{"message":"kept"}' }]);
    const renamed = [...old.map((type) => RenamedEvents[type]), "system.noted"];

    expect((await store.events.readAfter(0, undefined, 100)).map((e) => e.type)).toEqual(renamed);
    expect((await store.events.readAfter(0, { kind: "agent", id: "a1" }, 100)).map((e) => e.type)).toEqual(renamed.slice(0, -1));

    const bus = await new EventBus(store.events).open();
    const controller = new AbortController();
    const replayed: string[] = [];
    for await (const e of bus.subscribe({ afterId: 0, signal: controller.signal })) {
      replayed.push(e.type);
      if (replayed.length === renamed.length) controller.abort();
    }
    expect(replayed).toEqual(renamed);
    bus.close();

    const other = await stores.again(store);
    expect((await other.events.readAfter(0, undefined, 100)).map((e) => e.type)).toEqual(renamed);
  });
});
