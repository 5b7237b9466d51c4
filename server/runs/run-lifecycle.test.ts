import { resolve } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { RunStatus } from "../../shared/statuses";
import { Strategy } from "../../shared/strategy";
import { openSqliteStore, type SqliteStore } from "../db/sqlite-store";
import { DomainError } from "../errors";
import { EventBus } from "../events/bus";
import { nextRunStatus, RUN_LIFECYCLE_EVENTS, RUN_TRANSITIONS, RunLifecycle, type RunLifecycleEvent, type RunMove } from "./run-lifecycle";
import { emptyMemo, RunState, type PolicyPort } from "./run-state";

const migrationsDir = resolve(import.meta.dirname, "..", "..", "drizzle");
let stores: SqliteStore[] = [];

afterEach(() => {
  for (const store of stores) void store.close();
  stores = [];
});

const policy: PolicyPort = { update: () => {}, remember: () => {}, toJSON: () => ({}) };
const strategy = Strategy.parse({ name: "S", version: "1.0", agents: { a: { model: "anthropic/m" } }, flow: { type: "sequential", steps: [{ agent: "a" }] } });
const error = { code: "E", message: "went wrong" };

/** The allowed moves, written out: the table must say exactly this. */
const LEGAL: Record<string, RunStatus> = {
  "pending/start": "running",
  "pending/continue": "running",
  "pending/resume": "running",
  "pending/cancel": "cancelled",
  "running/complete": "completed",
  "running/fail": "error",
  "running/cancel": "cancelled",
  "running/interrupt": "error",
};

const pairs = RunStatus.options.flatMap((from) => RUN_LIFECYCLE_EVENTS.map((event) => ({ from, event, to: LEGAL[`${from}/${event}`] })));

function moveOf(event: RunLifecycleEvent): RunMove {
  switch (event) {
    case "start":
    case "continue":
      return { event, input: "in", requestId: "req" };
    case "resume":
      return { event, at: { segment: 1, memo: emptyMemo(), usage: { promptTokens: 0, completionTokens: 0 }, startedAt: 1, records: [] } };
    case "complete":
      return { event, result: "done" };
    default:
      return { event, error };
  }
}

function setup() {
  const store = openSqliteStore({ path: ":memory:", migrationsDir });
  stores.push(store);
  const db = store.db;
  const bus = new EventBus(store.events);
  const lifecycle = new RunLifecycle(store, bus);
  const newRun = (runId = "run-1") => new RunState({ runId, strategy, strategyPath: "/s.yaml", cwd: "/tmp" }, bus, policy);
  const types = (runId = "run-1") => bus.store.readAfter(0, { kind: "run", id: runId }, 100).map((e) => e.type);
  return { db, bus, lifecycle, newRun, types };
}

/** A live run brought to `status` through legal moves. */
async function runIn(status: RunStatus, s: ReturnType<typeof setup>): Promise<RunState> {
  const run = s.newRun();
  if (status === "pending") return run;
  if (status === "cancelled") {
    await s.lifecycle.transition(run, { event: "start", input: "in" });
    await s.lifecycle.transition(run, { event: "cancel", error });
    return run;
  }
  await s.lifecycle.transition(run, { event: "start", input: "in" });
  if (status === "completed") await s.lifecycle.transition(run, { event: "complete", result: "r" });
  if (status === "error") await s.lifecycle.transition(run, { event: "fail", error });
  return run;
}

describe("the run transition table", () => {
  it("holds exactly the legal moves", () => {
    const table = Object.fromEntries(Object.entries(RUN_TRANSITIONS).flatMap(([from, moves]) => Object.entries(moves).map(([event, to]) => [`${from}/${event}`, to])));
    expect(table).toEqual(LEGAL);
  });

  it.each(pairs)("$from --$event--> $to (nextRunStatus)", ({ from, event, to }) => {
    if (to) return expect(nextRunStatus("r", from, event)).toBe(to);
    let thrown: unknown;
    try {
      nextRunStatus("r", from, event);
    } catch (err) {
      thrown = err;
    }
    expect(thrown).toBeInstanceOf(DomainError);
    expect(thrown).toMatchObject({ code: "RUN_TRANSITION_INVALID", kind: "CONFLICT", details: { runId: "r", from, event } });
  });

  it.each(pairs)("$from --$event--> $to (RunLifecycle.transition on a live run)", async ({ from, event, to }) => {
    const s = setup();
    const run = await runIn(from, s);
    const rowBefore = (await s.lifecycle.row(run.runId));
    const eventsBefore = s.types();
    if (!to) {
      await expect(s.lifecycle.transition(run, moveOf(event))).rejects.toMatchObject({ code: "RUN_TRANSITION_INVALID", details: { from, event } });
      expect(run.status).toBe(from);
      expect((await s.lifecycle.row(run.runId))).toEqual(rowBefore);
      expect(s.types()).toEqual(eventsBefore);
      return;
    }
    await s.lifecycle.transition(run, moveOf(event));
    expect(run.status).toBe(to);
    const added = s.types().slice(eventsBefore.length);
    const row = (await s.lifecycle.row(run.runId));
    if (event === "start" || event === "continue") {
      // the row and its event, stored together
      expect(added).toEqual(["run.started"]);
      expect(row).toMatchObject({ status: "running", segment: 1, input: "in" });
    } else if (from === "running") {
      expect(added).toEqual(["run.completed"]);
      expect(row).toMatchObject({ status: to, segment: 1, ...(event === "complete" ? { result: "done", errorCode: null } : { errorCode: "E" }) });
    } else {
      // resume and the release of a prepared run change memory only
      expect(added).toEqual([]);
      expect(row).toEqual(rowBefore);
    }
  });
});

describe("RunLifecycle on stored rows", () => {
  it("refuses to start a segment over a row that is still running, storing neither the row nor the event", async () => {
    const s = setup();
    await s.lifecycle.transition(s.newRun(), { event: "start", input: "first" });
    const twin = s.newRun();
    await expect(s.lifecycle.transition(twin, { event: "continue", input: "second" })).rejects.toMatchObject({ code: "RUN_TRANSITION_INVALID", details: { from: "running", event: "continue" } });
    expect(s.types()).toEqual(["run.started"]);
    expect((await s.lifecycle.row("run-1"))).toMatchObject({ status: "running", input: "first" });
  });

  it("continues a run whose last segment ended: the same row, the next segment", async () => {
    const s = setup();
    await runIn("completed", s);
    const next = s.newRun();
    next.preparedFrom(1, []);
    await s.lifecycle.transition(next, { event: "continue", input: "again" });
    expect((await s.lifecycle.row("run-1"))).toMatchObject({ status: "running", segment: 2, input: "again", result: null });
    await s.lifecycle.transition(next, { event: "complete", result: "two" });
    expect((await s.lifecycle.row("run-1"))).toMatchObject({ status: "completed", segment: 2, result: "two" });
    expect(s.types()).toEqual(["run.started", "run.completed", "run.started", "run.completed"]);
  });

  it("interrupts a running row (recovery), and refuses a row that already ended", async () => {
    const s = setup();
    await s.lifecycle.transition(s.newRun(), { event: "start", input: "in", requestId: "req-9" });
    await s.lifecycle.interrupt((await s.lifecycle.row("run-1"))!, { code: "INTERRUPTED", message: "stopped" }, "req-9");
    expect((await s.lifecycle.row("run-1"))).toMatchObject({ status: "error", errorCode: "INTERRUPTED" });
    const last = s.bus.store.readAfter(0, { kind: "run", id: "run-1" }, 10).at(-1)!;
    expect(last).toMatchObject({ type: "run.completed", payload: { segment: 1, status: "error", requestId: "req-9" } });
    await expect(s.lifecycle.interrupt((await s.lifecycle.row("run-1"))!, error, undefined)).rejects.toMatchObject({ code: "RUN_TRANSITION_INVALID", details: { from: "error", event: "interrupt" } });
    expect(s.types()).toEqual(["run.started", "run.completed"]);
  });

  it("reconciles a running row with the run.completed its timeline already holds", async () => {
    const s = setup();
    await s.lifecycle.transition(s.newRun(), { event: "start", input: "in" });
    const completed = await s.bus.publish("run.completed", { segment: 1, status: "cancelled", error }, { runId: "run-1" });
    await s.lifecycle.reconcile((await s.lifecycle.row("run-1"))!, completed);
    expect((await s.lifecycle.row("run-1"))).toMatchObject({ status: "cancelled", errorCode: "E", completedAt: Date.parse(completed.ts) });
    await expect(s.lifecycle.reconcile((await s.lifecycle.row("run-1"))!, completed)).rejects.toMatchObject({ code: "RUN_TRANSITION_INVALID" });
  });
});
