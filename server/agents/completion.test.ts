import { describe, expect, it } from "vitest";
import { decideCompletion, type ExitObservation } from "./completion";

const base: ExitObservation = {
  stopRequested: false,
  signal: null,
  result: null,
  rateLimit: null,
  exitCode: 0,
  watchdog: null,
  lastText: null,
  stderrTail: "",
  canResume: true,
  missingSignalRetries: 0,
  queuedMessages: 0,
};

describe("decideCompletion", () => {
  it("follows signal.json first: done, questions, error, and malformed", () => {
    expect(decideCompletion({ ...base, signal: { signal: { status: "done", result: { message: "ok" } } }, result: { isError: true, message: "x" } })).toEqual({ action: "idle", result: "ok" });
    expect(decideCompletion({ ...base, signal: { signal: { status: "questions", questions: [{ id: "q1", question: "?" }] } } })).toEqual({ action: "waiting", questions: [{ id: "q1", question: "?" }] });
    expect(decideCompletion({ ...base, signal: { signal: { status: "error", error: "nope" } } })).toMatchObject({ action: "crashed", reason: expect.stringContaining("nope") });
    expect(decideCompletion({ ...base, signal: { error: "not valid JSON" } })).toMatchObject({ action: "crashed", reason: expect.stringContaining("invalid") });
  });

  it("delivers queued messages instead of going idle", () => {
    expect(decideCompletion({ ...base, queuedMessages: 2, signal: { signal: { status: "done", result: { message: "ok" } } } })).toEqual({ action: "deliver_queued", result: "ok" });
  });

  it("a stop wins over everything", () => {
    expect(decideCompletion({ ...base, stopRequested: true, signal: { signal: { status: "done", result: { message: "ok" } } } }).action).toBe("stopped");
  });

  it("without a signal: rate limit, is_error, crash, then one missing-signal retry, then the result line", () => {
    expect(decideCompletion({ ...base, rateLimit: { message: "limit", resetsAt: "2030-01-01T00:00:00.000Z" } })).toMatchObject({ action: "rate_limited", resetsAt: "2030-01-01T00:00:00.000Z" });
    expect(decideCompletion({ ...base, result: { isError: true, message: "boom" }, exitCode: 1 })).toMatchObject({ action: "crashed", reason: expect.stringContaining("boom") });
    expect(decideCompletion({ ...base, exitCode: 137, stderrTail: "killed" })).toMatchObject({ action: "crashed", reason: expect.stringMatching(/code 137.*killed/) });
    expect(decideCompletion({ ...base, result: { isError: false, message: "fine" } })).toEqual({ action: "retry_missing_signal" });
    expect(decideCompletion({ ...base, result: { isError: false, message: "fine" }, missingSignalRetries: 1 })).toMatchObject({ action: "idle", result: "fine" });
    expect(decideCompletion({ ...base, result: { isError: false, message: "fine" }, canResume: false })).toMatchObject({ action: "idle", result: "fine" });
    expect(decideCompletion({ ...base, exitCode: null, watchdog: "hung_after_result", result: { isError: false, message: "r" }, missingSignalRetries: 1 })).toMatchObject({ action: "idle" });
    expect(decideCompletion({ ...base, exitCode: null, watchdog: "silent" })).toMatchObject({ action: "crashed", reason: expect.stringContaining("watchdog") });
  });
});
