import Fastify from "fastify";
import { afterEach, describe, expect, it } from "vitest";
import type { BusEvent } from "../../shared/events";
import type { Context } from "../trpc/context";
import { createCallerFactory } from "../trpc/init";
import { registerDaemonWebhook } from "./daemon-webhook";
import { daemonsRouter } from "./daemons.router";
import { daemonHarness, waitFor, type DaemonHarness } from "../testing/daemons-harness";

let h: DaemonHarness;
afterEach(async () => {
  await h.close();
});

function caller(signal?: AbortSignal) {
  const ctx = { bus: h.bus, daemons: h.service, stats: { sseOpened: () => {}, sseClosed: () => {} }, redact: (s: string) => s } as unknown as Context;
  return createCallerFactory(daemonsRouter)(ctx, { signal });
}

describe("daemonsRouter", () => {
  it("spawns, triggers, lists, snapshots, stops and resumes; errors keep their codes", async () => {
    h = daemonHarness();
    const api = caller();
    const d = await api.spawn({ task: "Echo triggers.", name: "echoer", eventQueueCapacity: 8 });
    expect(d).toMatchObject({ name: "echoer", status: "running", event_queue_capacity: 8 });
    expect(await api.trigger({ id: d.id, payload: { n: 1 } })).toEqual({ seq: 0 });
    await waitFor(() => h.calls.includes(JSON.stringify({ n: 1 })), 5000, "the trigger");
    expect((await api.list()).map((s) => s.id)).toEqual([d.id]);
    expect(await api.snapshot({ id: d.id })).toMatchObject({ id: d.id, event_queue_capacity: 8 });
    expect((await api.stop({ id: d.id })).status).toBe("stopped");
    await expect(api.trigger({ id: d.id, payload: "x" })).rejects.toMatchObject({ code: "CONFLICT", cause: { code: "DAEMON_NOT_RUNNING" } });
    expect((await api.resume({ path: d.persist_path })).status).toBe("running");
    await expect(api.spawn({ name: "no task" } as never)).rejects.toMatchObject({ code: "BAD_REQUEST" });
    expect(await api.delete({ id: d.id })).toEqual({ deleted: true });
  });

  it("onEvents yields the daemon's events in tracked batches from lastEventId", async () => {
    h = daemonHarness();
    const ac = new AbortController();
    const api = caller(ac.signal);
    const d = await api.spawn({ task: "Echo triggers." });
    await api.trigger({ id: d.id, payload: "hello" });
    const iterable = (await api.onEvents({ daemonId: d.id })) as AsyncIterable<[string, BusEvent[], unknown]>;
    const seen: BusEvent[] = [];
    for await (const [lastId, batch] of iterable) {
      expect(lastId).toBe(String(batch.at(-1)!.id));
      seen.push(...batch);
      if (seen.some((e) => e.type === "daemon.triggered")) break;
    }
    ac.abort();
    expect(seen[0]!.type).toBe("daemon.spawned");
    expect(seen.every((e) => e.scope.daemonId === d.id)).toBe(true);
  });
});

describe("registerDaemonWebhook", () => {
  it("POST /daemons/:id/trigger: 202 {seq}, 429 when full, 404 unknown, 409 not running", async () => {
    h = daemonHarness();
    const app = Fastify();
    registerDaemonWebhook(app, h.service, { hasGrant: async () => false });
    await app.ready();
    try {
      const d = await h.service.spawn({ task: "Echo triggers.", eventQueueCapacity: 1 });
      await waitFor(() => h.calls.length >= 1, 5000, "the first turn");
      const slow = await app.inject({ method: "POST", url: `/daemons/${d.id}/trigger`, payload: JSON.stringify(`SLOW ${"w".repeat(600)}`), headers: { "content-type": "application/json" } });
      expect(slow.statusCode).toBe(202);
      expect(slow.json()).toEqual({ seq: 0 });
      const full = await app.inject({ method: "POST", url: `/daemons/${d.id}/trigger`, payload: { kind: "push" } });
      expect(full.statusCode).toBe(429);
      expect(full.json()).toMatchObject({ error: "DAEMON_QUEUE_FULL", details: { daemonId: d.id, capacity: 1 } });
      const unknown = await app.inject({ method: "POST", url: `/daemons/daemon_x/trigger`, payload: {} });
      expect(unknown.statusCode).toBe(404);
      await h.service.stop(d.id);
      const stopped = await app.inject({ method: "POST", url: `/daemons/${d.id}/trigger`, payload: {} });
      expect(stopped.statusCode).toBe(409);
    } finally {
      await app.close();
    }
  });
});
