import { mkdtempSync, readFileSync, rmSync, unlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import type { DomainError } from "../errors";
import { jsonWithArrays, RootWriter } from "./persist";
import { daemonHarness, waitFor, type DaemonHarness } from "../testing/daemons-harness";

let h: DaemonHarness;
const extra: string[] = [];
afterEach(async () => {
  await h.close();
  for (const dir of extra.splice(0)) rmSync(dir, { recursive: true, force: true });
});

async function caught(p: Promise<unknown>): Promise<DomainError> {
  try {
    await p;
  } catch (err) {
    return err as DomainError;
  }
  throw new Error("expected a rejection");
}

const TASK = "Summarize each trigger.";
const readJson = (path: string) => JSON.parse(readFileSync(path, "utf8")) as Record<string, unknown>;

async function spawnAndStop(): Promise<{ id: string; root: string }> {
  const d = await h.service.spawn({ task: TASK, name: "reviewer", system: "Be brief." });
  await waitFor(() => h.calls.length >= 1, 5000, "the first turn");
  const s = await h.service.stop(d.id);
  return { id: d.id, root: s.persist_path };
}

describe("DaemonsService: persistence", () => {
  it("writes daemon.meta.json and daemon.json in the reference's snake_case layout", async () => {
    h = daemonHarness();
    const d = await h.service.spawn({ task: TASK, name: "reviewer", system: "Be brief.", sessionId: "s-1" });
    expect(d.persist_path).toBe(join(h.home, "daemons", d.id));
    await waitFor(() => h.calls.length >= 1, 5000, "the first turn");
    await h.service.trigger(d.id, { kind: "file_changed" });
    await waitFor(async () => (await h.service.snapshot(d.id)).total_iterations === 2, 5000, "two turns");
    await h.service.stop(d.id);
    const meta = readJson(join(d.persist_path, "daemon.meta.json"));
    expect(meta).toMatchObject({
      _type: "daemon_meta",
      id: d.id,
      name: "reviewer",
      prompt: TASK,
      system: "Be brief.",
      session_id: "s-1",
      options: { model: "mock/echo" },
      event_queue_capacity: 1024,
      next_event_seq: 1,
      pending_events: [],
      inflight_event: null,
    });
    const snap = readJson(join(d.persist_path, "daemon.json"));
    expect(snap).toMatchObject({ _type: "daemon_snapshot", daemon_state: "idle", total_iterations: 2, transcript_summary: null, watch_state: {} });
    expect(typeof snap.saved_at).toBe("string");
    expect(JSON.stringify(snap.recorded_messages)).toContain("file_changed");
    const types = h.bus.store.readAfter(0, { kind: "daemon", id: d.id }, 1000).map((e) => e.type);
    expect(types).toEqual(expect.arrayContaining(["daemon.spawned", "daemon.triggered", "daemon.snapshotted", "daemon.stopped"]));
    for (const e of h.bus.store.readAfter(0, { kind: "daemon", id: d.id }, 1000)) {
      expect((e.payload as { summary: string }).summary.length).toBeLessThanOrEqual(160);
    }
  });

  it("fails with RESTORE_FAILED (never a crash) for a missing or corrupt daemon.json or meta", async () => {
    h = daemonHarness();
    const { id, root } = await spawnAndStop();
    const metaPath = join(root, "daemon.meta.json");
    const snapPath = join(root, "daemon.json");
    const goodMeta = readFileSync(metaPath, "utf8");
    const goodSnap = readFileSync(snapPath, "utf8");

    writeFileSync(snapPath, "{ not json");
    let err = await caught(h.service.resume({ id }));
    expect(err.code).toBe("RESTORE_FAILED");
    expect(err.message).toMatch(/daemon\.json is not valid JSON/);

    unlinkSync(snapPath);
    err = await caught(h.service.resume({ path: root }));
    expect(err.code).toBe("RESTORE_FAILED");
    expect(err.message).toMatch(/daemon\.json is missing/);

    writeFileSync(snapPath, goodSnap);
    writeFileSync(metaPath, JSON.stringify({ ...JSON.parse(goodMeta), pending_events: "nope" }));
    err = await caught(h.service.resume({ id }));
    expect(err.code).toBe("RESTORE_FAILED");
    expect(err.message).toMatch(/daemon\.meta\.json is corrupt: pending_events/);

    unlinkSync(metaPath);
    err = await caught(h.service.resume({ id }));
    expect(err.message).toMatch(/daemon\.meta\.json is missing/);

    writeFileSync(metaPath, goodMeta);
    expect((await h.service.resume({ id })).status).toBe("running");
  });

  it("refuses a persistPath outside the allowed roots, and accepts one inside SWITCHYARD_ALLOWED_ROOTS", async () => {
    const allowed = mkdtempSync(join(tmpdir(), "switchyard-allowed-"));
    extra.push(allowed);
    h = daemonHarness({ allowedRoots: [allowed] });
    const err = await caught(h.service.spawn({ task: TASK, persistPath: join(tmpdir(), "elsewhere", "d1") }));
    expect(err.code).toBe("DAEMON_PATH_NOT_ALLOWED");
    expect((await caught(h.service.spawn({ task: TASK, persistPath: join(h.home, "..", "escape") }))).code).toBe("DAEMON_PATH_NOT_ALLOWED");
    expect((await caught(h.service.resume({ path: "/etc" }))).code).toBe("DAEMON_PATH_NOT_ALLOWED");
    const ok = await h.service.spawn({ task: TASK, persistPath: join(allowed, "d1") });
    expect(ok.persist_path).toBe(join(allowed, "d1"));
    const busy = await caught(h.service.spawn({ task: TASK, persistPath: join(allowed, "d1") }));
    expect(busy.code).toBe("DAEMON_ALREADY_RUNNING");
  });

  it("recover() resumes daemons that were running, the in-flight event replayed first", async () => {
    h = daemonHarness();
    const d = await h.service.spawn({ task: TASK });
    await waitFor(() => h.calls.length >= 1, 5000, "the first turn");
    const slow = `SLOW ${"z".repeat(600)}`;
    await h.service.trigger(d.id, slow);
    await h.service.trigger(d.id, "next");
    await waitFor(async () => (await h.service.snapshot(d.id)).inflight_event?.seq === 0, 5000, "seq 0 in flight");
    // server shutdown mid-turn: the daemon stays "running" on disk
    await h.service.shutdown();
    const before = h.calls.length;
    const restarted = h.newService();
    expect((await restarted.list()).map((s) => s.status)).toEqual(["running"]);
    const { resumed } = await restarted.recover();
    expect(resumed).toEqual([d.id]);
    await waitFor(() => h.calls.length >= before + 2, 10_000, "two deliveries");
    expect(h.calls.slice(before)).toEqual([slow, "next"]);
    const resumedEvent = h.bus.store.readAfter(0, { kind: "daemon", id: d.id }, 1000).find((e) => e.type === "daemon.resumed");
    expect(resumedEvent?.payload).toMatchObject({ pendingEventCount: 2, replayedSeq: 0 });
  });

  it("recover() replays an event left in flight by a crash (queue table wins over the meta file)", async () => {
    h = daemonHarness();
    const { id } = await spawnAndStop();
    // as if the process died mid-turn: the table says in flight, the last meta file knows nothing of it
    h.db.$client.prepare("UPDATE daemons SET status = 'running' WHERE id = ?").run(id);
    h.db.$client.prepare("INSERT INTO daemon_queue (daemon_id, seq, enqueued_at, payload, state) VALUES (?, 0, ?, ?, 'inflight')").run(id, new Date().toISOString(), JSON.stringify("crashed"));
    h.db.$client.prepare("INSERT INTO daemon_queue (daemon_id, seq, enqueued_at, payload, state) VALUES (?, 1, ?, ?, 'pending')").run(id, new Date().toISOString(), JSON.stringify("after"));
    const before = h.calls.length;
    const restarted = h.newService();
    await restarted.recover();
    await waitFor(() => h.calls.length >= before + 2, 5000, "two deliveries");
    expect(h.calls.slice(before)).toEqual(["crashed", "after"]);
    expect((await restarted.trigger(id, "later")).seq).toBe(2);
  });

  it("snapshot() of a daemon not loaded in this process reads its root, with its queue", async () => {
    h = daemonHarness();
    const d = await h.service.spawn({ task: TASK });
    await waitFor(() => h.calls.length >= 1, 5000, "the first turn");
    await h.service.trigger(d.id, `SLOW ${"q".repeat(600)}`);
    await h.service.trigger(d.id, "second");
    await waitFor(async () => (await h.service.snapshot(d.id)).inflight_event?.seq === 0, 5000, "seq 0 in flight");
    await h.service.stop(d.id);
    const other = h.newService();
    const snap = await other.snapshot(d.id);
    expect(snap).toMatchObject({ id: d.id, status: "stopped", pending_event_count: 2, queued_event_count: 2, inflight_event: null, event_queue_capacity: 1024, total_iterations: 1 });
    expect(snap.pending_events.map((e) => e.payload)).toEqual([`SLOW ${"q".repeat(600)}`, "second"]);
    // resuming a running daemon returns its summary
    const resumed = await other.resume({ id: d.id });
    expect((await other.resume({ path: resumed.persist_path })).id).toBe(d.id);
  });

  it("delete() stops the daemon, forgets it and removes its default root", async () => {
    h = daemonHarness();
    const d = await h.service.spawn({ task: TASK });
    await h.service.delete(d.id);
    expect(await h.service.list()).toEqual([]);
    expect(() => readFileSync(join(d.persist_path, "daemon.json"))).toThrow();
    expect((await caught(h.service.delete(d.id))).code).toBe("DAEMON_NOT_FOUND");
  });
});

describe("jsonWithArrays", () => {
  it("is the JSON of the whole object, arrays appended, each item serialized once", () => {
    const cache = new WeakMap<object, string>();
    const a = { seq: 1, payload: { text: 'quote " and \\ backslash' } };
    const b = { seq: 2, payload: "two" };
    const head = { _type: "daemon_meta", name: 'has "pending_events":[] inside', inflight_event: null };
    const text = jsonWithArrays(head, { pending_events: [a, b], more: [] }, cache);
    expect(JSON.parse(text)).toEqual({ ...head, pending_events: [a, b], more: [] });
    expect(cache.get(a)).toBe(JSON.stringify(a));
    // a cached item is not serialized again (a changed object would show its old text)
    (a as { seq: number }).seq = 99;
    expect(JSON.parse(jsonWithArrays({}, { q: [a] }, cache))).toEqual({ q: [{ seq: 1, payload: a.payload }] });
  });
});

describe("RootWriter", () => {
  it("pauses between writes in proportion to how long a write takes, and a caller who waits cuts the pause short", async () => {
    const dir = mkdtempSync(join(tmpdir(), "switchyard-rootwriter-"));
    try {
      const path = join(dir, "f.json");
      const errors: unknown[] = [];
      // a tiny duty cycle: after any write, the next one waits (practically) forever
      const writer = new RootWriter((err) => errors.push(err), 0.000001);
      const files = (n: number) => () => ({ files: [[path, JSON.stringify({ n })]] as Array<[string, string]> });
      writer.schedule(files(1));
      await new Promise((r) => setTimeout(r, 100));
      expect(JSON.parse(readFileSync(path, "utf8"))).toEqual({ n: 1 });
      writer.schedule(files(2));
      await new Promise((r) => setTimeout(r, 100));
      expect(JSON.parse(readFileSync(path, "utf8"))).toEqual({ n: 1 }); // paused
      const t0 = performance.now();
      await writer.writeNow(files(3));
      expect(performance.now() - t0).toBeLessThan(2000);
      expect(JSON.parse(readFileSync(path, "utf8"))).toEqual({ n: 3 }); // the newest state, at once
      expect(errors).toEqual([]);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
