import { TRPCClientError } from "@trpc/client";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { BusEvent } from "../../shared/events";
import type { FakeModelServer } from "../testing/fake-model";
import { startRunsWorld, type RunsWorld } from "../testing/runs-world";
import type { TestServer } from "../testing/server-harness";

/**
 * Strategy runs over tRPC (`runs.*`): the same engine as /ws, driven by the typed client. A user
 * agent answered with runs.respond, runs.get while waiting, a late runs.onEvents subscriber
 * replaying the whole timeline, runs.stop, and input errors naming the field.
 */

const MODEL = "anthropic/claude-sonnet-4-5";

let world: RunsWorld;
let fake: FakeModelServer;
let t: TestServer;
let cwd: string;
const strategy = (name: string, body: string) => world.strategy(name, body);

beforeAll(async () => {
  world = await startRunsWorld("switchyard-trpc-cwd-");
  ({ fake, t, cwd } = world);
});

afterAll(() => world.stop());

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function until<T>(read: () => Promise<T>, done: (v: T) => boolean, timeoutMs = 10_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const v = await read();
    if (done(v)) return v;
    if (Date.now() > deadline) throw new Error(`condition not met in ${timeoutMs} ms; last value: ${JSON.stringify(v)}`);
    await sleep(30);
  }
}

type ClientError = { message: string; data: { code: string; appCode?: string } };

/** The TRPCClientError a call rejects with. */
async function trpcError(call: Promise<unknown>): Promise<ClientError> {
  try {
    await call;
  } catch (err) {
    expect(err).toBeInstanceOf(TRPCClientError);
    return err as ClientError;
  }
  throw new Error("expected the call to fail");
}

/** Subscribe to runs.onEvents and collect events until one of `type` arrives. */
function collectEvents(runId: string, untilType: string, timeoutMs = 10_000): Promise<BusEvent[]> {
  const events: BusEvent[] = [];
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      sub.unsubscribe();
      reject(new Error(`no ${untilType} in time; got ${events.map((e) => e.type).join(", ")}`));
    }, timeoutMs);
    const sub = t.client.runs.onEvents.subscribe(
      { runId },
      {
        onData: (d) => {
          events.push(...(d.data as BusEvent[]));
          if (events.some((e) => e.type === untilType)) {
            clearTimeout(timer);
            sub.unsubscribe();
            resolve(events);
          }
        },
        onError: (err) => {
          clearTimeout(timer);
          reject(err instanceof Error ? err : new Error(String(err)));
        },
      },
    );
  });
}

describe("runs over tRPC", () => {
  it("prepare, start, wait on a user agent, respond; get shows the pending request and the graph", async () => {
    const path = strategy("human", `name: Human\nversion: "1.0"\nagents:\n  human: {type: user, config: {presetMessage: "Your topic?"}}\n  echo: {model: ${MODEL}}\nflow: {type: sequential, steps: [{agent: human}, {agent: echo}]}\n`);
    const prepared = await t.client.runs.prepare.mutate({ strategyPath: path, cwd });
    expect(prepared).toMatchObject({ strategyName: "Human", agents: ["human", "echo"], attached: false, continuation: false, flowTree: { type: "sequential" } });
    const { runId } = prepared;
    const pending = await t.client.runs.get.query({ runId });
    expect(pending).toMatchObject({ runId, status: "pending", pendingRequests: [] });

    // a user agent asks only when it gets nothing: started without input
    expect(await t.client.runs.start.mutate({ runId, input: "" })).toEqual({ runId, segment: 1 });
    const waiting = await until(() => t.client.runs.get.query({ runId }), (r) => r.pendingRequests.length > 0);
    expect(waiting.status).toBe("running");
    expect(waiting.pendingRequests).toHaveLength(1);
    const request = waiting.pendingRequests[0]!;
    expect(request).toMatchObject({ kind: "input", agentName: "human", prompt: "Your topic?" });
    expect(waiting.graph?.nodes.filter((n) => n.kind === "agent").map((n) => n.agent)).toEqual(["human", "echo"]);
    expect(waiting.graph?.edges).toEqual([{ from: "flow.steps.0", to: "flow.steps.1", kind: "next" }]);
    expect(waiting.flowTree).toMatchObject({ type: "sequential", steps: [{ agent: "human" }, { agent: "echo" }] });

    const wrong = await trpcError(t.client.runs.respond.mutate({ runId, requestId: "not-a-request", text: "x" }));
    expect(wrong.data.code).toBe("NOT_FOUND");
    expect(await t.client.runs.respond.mutate({ runId, requestId: request.requestId, text: "SAY[answered by tRPC]" })).toEqual({ answered: request.requestId, kind: "input" });

    const done = await until(() => t.client.runs.get.query({ runId }), (r) => r.status !== "running");
    expect(done).toMatchObject({ status: "completed", result: "answered by tRPC", pendingRequests: [], error: null });
    expect(done.completedAt).not.toBeNull();
    expect(done.usage.promptTokens).toBeGreaterThan(0);
  });

  it("a late runs.onEvents subscriber gets the whole timeline from run.started to run.completed", async () => {
    const path = strategy("pair", `name: Pair\nversion: "1.0"\nagents:\n  a: {model: ${MODEL}, systemPrompt: "SAY[first]"}\n  b: {model: ${MODEL}, systemPrompt: "SAY[second]"}\nflow: {type: sequential, steps: [{agent: a}, {agent: b}]}\n`);
    const { runId } = await t.client.runs.prepare.mutate({ strategyPath: path, cwd });
    await t.client.runs.start.mutate({ runId, input: "go" });
    await until(() => t.client.runs.get.query({ runId }), (r) => r.status === "completed");

    const replayed = await collectEvents(runId, "run.completed");
    const { events: stored } = await t.client.runs.timeline.query({ runId });
    expect(replayed.map((e) => e.id)).toEqual(stored.map((e) => e.id));
    expect(replayed.every((e) => e.scope.runId === runId)).toBe(true);
    const ids = replayed.map((e) => e.id);
    expect(new Set(ids).size).toBe(ids.length);
    expect(ids).toEqual([...ids].sort((x, y) => x - y));
    expect(replayed[0]).toMatchObject({ type: "run.started", payload: { strategyName: "Pair", cwd, initialInput: "go", segment: 1 } });
    expect(replayed.at(-1)).toMatchObject({ type: "run.completed", payload: { status: "completed", result: "second" } });
    expect(replayed.filter((e) => e.type === "run.step_completed").map((e) => (e.payload as { stepName: string }).stepName)).toEqual(["a", "b"]);

    // from a lastEventId: only what follows it
    const cut = ids[Math.floor(ids.length / 2)]!;
    const tail: BusEvent[] = await new Promise((resolve, reject) => {
      const got: BusEvent[] = [];
      const sub = t.client.runs.onEvents.subscribe(
        { runId, lastEventId: String(cut) },
        {
          onData: (d) => {
            got.push(...(d.data as BusEvent[]));
            if (got.some((e) => e.type === "run.completed")) {
              sub.unsubscribe();
              resolve(got);
            }
          },
          onError: reject,
        },
      );
    });
    expect(tail.map((e) => e.id)).toEqual(ids.filter((id) => id > cut));
  });

  it("runs.stop on a running run cancels it and aborts the model call", async () => {
    const path = strategy("long", `name: Long\nversion: "1.0"\nagents:\n  talker: {model: ${MODEL}, systemPrompt: "LONG[100000] DELAY[5]"}\nflow: {type: sequential, steps: [{agent: talker}]}\n`);
    const { runId } = await t.client.runs.prepare.mutate({ strategyPath: path, cwd });
    const before = fake.requests.length;
    await t.client.runs.start.mutate({ runId, input: "talk" });
    await fake.waitForRequests(before + 1);
    await until(() => t.client.runs.timeline.query({ runId }), (r) => r.events.some((e) => e.type === "run.agent_streamed"));
    expect(await t.client.runs.stop.mutate({ runId })).toEqual({ runId, stopped: true });
    const stopped = await t.client.runs.get.query({ runId });
    expect(stopped).toMatchObject({ status: "cancelled", error: { code: "CANCELLED" } });
    await fake.waitForIdle(5000);
    expect(fake.requests[before]?.aborted).toBe(true);
    const { events } = await t.client.runs.timeline.query({ runId });
    expect(events.filter((e) => e.type === "run.completed")).toHaveLength(1);
    expect(events.find((e) => e.type === "run.completed")?.payload).toMatchObject({ status: "cancelled", error: { code: "CANCELLED" } });
    // stopping again is harmless
    expect(await t.client.runs.stop.mutate({ runId })).toEqual({ runId, stopped: true });
  });

  it("bad input is BAD_REQUEST naming the field; unknown runs are NOT_FOUND", async () => {
    const noPath = await trpcError(t.client.runs.prepare.mutate({ cwd }));
    expect(noPath.data.code).toBe("BAD_REQUEST");
    expect(noPath.message).toMatch(/strategyPath/);
    const badPath = await trpcError(t.client.runs.prepare.mutate({ strategyPath: 123 as unknown as string }));
    expect(badPath.data).toMatchObject({ code: "BAD_REQUEST", appCode: "VALIDATION_ERROR" });
    expect(badPath.message).toMatch(/strategyPath/);
    const noInput = await trpcError(t.client.runs.continue.mutate({ runId: "r" } as unknown as { runId: string; input: string }));
    expect(noInput.data.code).toBe("BAD_REQUEST");
    expect(noInput.message).toMatch(/input/);
    const emptySteer = await trpcError(t.client.runs.steer.mutate({ runId: "r", text: "" }));
    expect(emptySteer.data.code).toBe("BAD_REQUEST");
    expect(emptySteer.message).toMatch(/text/);
    const noAnswer = await trpcError(t.client.runs.respond.mutate({ runId: "r", requestId: "q" }));
    expect(noAnswer.data.code).toBe("BAD_REQUEST");
    expect(noAnswer.message).toMatch(/text/);

    const unknown = await trpcError(t.client.runs.get.query({ runId: "no-such-run" }));
    expect(unknown.data).toMatchObject({ code: "NOT_FOUND", appCode: "RUN_NOT_FOUND" });
    const notPrepared = await trpcError(t.client.runs.start.mutate({ runId: "no-such-run" }));
    expect(notPrepared.data).toMatchObject({ code: "NOT_FOUND", appCode: "START_FAILED" });
    expect(await t.client.health.query()).toMatchObject({ status: "ok" });
  });

  it("runs.list pages as useInfiniteQuery asks (cursor, direction), runs.counts agrees, a foreign cursor is BAD_INPUT", async () => {
    const total = (await t.client.runs.counts.query({ cwd })).total;
    expect(total).toBeGreaterThanOrEqual(2);
    const first = await t.client.runs.list.query({ cwd, limit: 1, direction: "forward" });
    expect(first.items).toHaveLength(1);
    const rest = await t.client.runs.list.query({ cwd, limit: 1000, cursor: first.nextCursor, direction: "forward" });
    expect(rest.nextCursor).toBeNull();
    expect([...first.items, ...rest.items].map((r) => r.runId)).toEqual((await t.client.runs.list.query({ cwd })).items.map((r) => r.runId));
    expect(first.items.length + rest.items.length).toBe(total);
    const foreign = await trpcError(t.client.runs.list.query({ limit: 1, cursor: "not-a-cursor" }));
    expect(foreign.data).toMatchObject({ code: "BAD_REQUEST", appCode: "BAD_INPUT" });
    expect(foreign.message).toMatch(/^cursor:/);
    const tooMany = await trpcError(t.client.runs.list.query({ limit: 5000 }));
    expect(tooMany.message).toMatch(/limit/);
  });
});
