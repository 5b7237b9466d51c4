import { createTRPCUntypedClient, TRPCClientError, type TRPCLink } from "@trpc/client";
import { observable } from "@trpc/server/observable";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import type { AppRouter } from "../../../server/trpc/router";
import { backoffMs, resumeLink, retryDelayOf } from "./resume-link";
import { TrackedBatcher, type TrackedMessage } from "./tracked-batcher";

type Ev = { id: number };
type Attempt = {
  input: unknown;
  /** Deliver events as one tracked message each, as httpSubscriptionLink does. */
  send: (...ids: number[]) => void;
  start: () => void;
  fail: (error?: TRPCClientError<AppRouter>) => void;
};

/** Stands in for httpSubscriptionLink (the server end): records each attempt, which the test drives. */
function fakeServer() {
  const attempts: Attempt[] = [];
  const link: TRPCLink<AppRouter> = () => ({ op }) =>
    observable((observer) => {
      attempts.push({
        input: op.input,
        start: () => observer.next({ result: { type: "started" } }),
        send: (...ids) => {
          for (const id of ids) observer.next({ result: { id: String(id), data: { id: String(id), data: { id } } } });
        },
        fail: (error = new TRPCClientError("the connection dropped")) => observer.error(error),
      });
      return () => {};
    });
  return { attempts, link };
}

function subscribe() {
  const server = fakeServer();
  const client = createTRPCUntypedClient<AppRouter>({ links: [resumeLink(), server.link] });
  const delivered: Ev[][] = [];
  const batcher = new TrackedBatcher<Ev>((batch) => delivered.push(batch), 40);
  const states: { state: string; error: unknown }[] = [];
  const errors: unknown[] = [];
  const sub = client.subscription("runs.onEvents", { runId: "r1" }, {
    onData: (message) => batcher.push(message as TrackedMessage<Ev>),
    onConnectionStateChange: (s) => states.push({ state: s.state, error: s.error }),
    onError: (err) => errors.push(err),
  });
  const ids = () => delivered.flat().map((e) => e.id);
  return { ...server, batcher, delivered, ids, states, errors, sub };
}

beforeEach(() => void vi.useFakeTimers());
afterEach(() => void vi.useRealTimers());

describe("a tracked subscription through resumeLink", () => {
  it("resumes after a drop from the last tracked id: every id once, in order", () => {
    const s = subscribe();
    expect(s.attempts).toHaveLength(1);
    expect(s.attempts[0]!.input).toEqual({ runId: "r1" });
    s.attempts[0]!.start();
    s.attempts[0]!.send(1, 2, 3, 4, 5);
    s.attempts[0]!.fail();

    // the failure is announced as a wait before the next attempt, which comes after the backoff
    expect(retryDelayOf(s.states.at(-1)?.error)).toBe(1000);
    expect(s.errors).toEqual([]);
    vi.advanceTimersByTime(999);
    expect(s.attempts).toHaveLength(1);
    vi.advanceTimersByTime(1);
    expect(s.attempts).toHaveLength(2);
    expect(s.attempts[1]!.input).toEqual({ runId: "r1", lastEventId: "5" });

    // the server repeats the last one (say), then goes on
    s.attempts[1]!.start();
    s.attempts[1]!.send(5, 6, 7, 8);
    vi.advanceTimersByTime(40);
    expect(s.ids()).toEqual([1, 2, 3, 4, 5, 6, 7, 8]);
    expect(s.batcher.lastEventId).toBe(8);

    // and again, now from 8
    s.attempts[1]!.fail();
    vi.advanceTimersByTime(1000);
    expect(s.attempts[2]!.input).toEqual({ runId: "r1", lastEventId: "8" });
    s.attempts[2]!.send(9, 10);
    vi.advanceTimersByTime(40);
    expect(s.ids()).toEqual([1, 2, 3, 4, 5, 6, 7, 8, 9, 10]);
    s.sub.unsubscribe();
  });

  it("waits longer after each failure in a row, and starts over once an attempt connects", () => {
    const s = subscribe();
    const waits: (number | undefined)[] = [];
    for (let i = 0; i < 3; i++) {
      s.attempts.at(-1)!.fail();
      waits.push(retryDelayOf(s.states.at(-1)?.error));
      vi.advanceTimersByTime(waits.at(-1)!);
    }
    expect(waits).toEqual([1000, 2000, 4000]);
    expect(s.attempts).toHaveLength(4);
    s.attempts[3]!.start();
    s.attempts[3]!.fail();
    expect(retryDelayOf(s.states.at(-1)?.error)).toBe(1000);
    expect(backoffMs(10)).toBe(15_000);
    s.sub.unsubscribe();
  });

  it("does not retry an answer no retry can change", () => {
    const s = subscribe();
    const badRequest = new TRPCClientError<AppRouter>("runId: expected a string", {
      result: { error: { code: -32600, message: "runId: expected a string", data: { code: "BAD_REQUEST", httpStatus: 400 } } },
    } as never);
    s.attempts[0]!.fail(badRequest);
    vi.advanceTimersByTime(60_000);
    expect(s.attempts).toHaveLength(1);
    expect(s.errors).toEqual([badRequest]);
    expect(s.states.some((x) => retryDelayOf(x.error) !== undefined)).toBe(false);
  });

  it("stops retrying when unsubscribed", () => {
    const s = subscribe();
    s.attempts[0]!.fail();
    s.sub.unsubscribe();
    vi.advanceTimersByTime(60_000);
    expect(s.attempts).toHaveLength(1);
  });
});

describe("TrackedBatcher", () => {
  const msg = (id: number): TrackedMessage<Ev> => ({ id: String(id), data: { id } });

  it("hands a flood over in one batch per window", () => {
    const batches: Ev[][] = [];
    const b = new TrackedBatcher<Ev>((batch) => batches.push(batch), 40);
    for (let id = 1; id <= 5000; id++) b.push(msg(id));
    expect(batches).toHaveLength(0);
    vi.advanceTimersByTime(40);
    expect(batches).toHaveLength(1);
    expect(batches[0]).toHaveLength(5000);
    b.push(msg(5001));
    vi.advanceTimersByTime(40);
    expect(batches.map((x) => x.length)).toEqual([5000, 1]);
  });

  it("drops a repeat and anything older than what it has taken", () => {
    const batches: Ev[][] = [];
    const b = new TrackedBatcher<Ev>((batch) => batches.push(batch), 40);
    expect([3, 4, 4, 2, 5].map((id) => b.push(msg(id)))).toEqual([true, true, false, false, true]);
    b.flush();
    expect(batches).toEqual([[{ id: 3 }, { id: 4 }, { id: 5 }]]);
  });

  it("forgets everything on reset: nothing delivered later, ids start over", () => {
    const batches: Ev[][] = [];
    const b = new TrackedBatcher<Ev>((batch) => batches.push(batch), 40);
    b.push(msg(7));
    b.reset();
    vi.advanceTimersByTime(100);
    expect(batches).toEqual([]);
    expect(b.push(msg(1))).toBe(true);
  });
});
