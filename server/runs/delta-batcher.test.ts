import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import type { StreamEvent } from "../../shared/runs";
import { DELTA_MAX_CHARS, DELTA_WINDOW_MS, DeltaBatcher } from "./delta-batcher";

beforeEach(() => vi.useFakeTimers());
afterEach(() => vi.useRealTimers());

/** A batcher on the fake timers' clock, and what it sent. */
function batcher() {
  const sent: StreamEvent[] = [];
  return { sent, b: new DeltaBatcher((e) => sent.push(e), () => Date.now()) };
}

describe("DeltaBatcher", () => {
  it("sends an answer's first text at once, without waiting for the join window", () => {
    const { sent, b } = batcher();
    b.event({ type: "step-start" });
    b.text("Hel");
    expect(sent).toEqual([{ type: "step-start" }, { type: "text", text: "Hel" }]);
  });

  it("joins the deltas after it for one window, then is quick again once the stream is quiet", () => {
    const { sent, b } = batcher();
    b.text("a");
    b.text("b");
    b.text("c");
    expect(sent).toEqual([{ type: "text", text: "a" }]);
    vi.advanceTimersByTime(DELTA_WINDOW_MS);
    expect(sent).toEqual([
      { type: "text", text: "a" },
      { type: "text", text: "bc" },
    ]);
    b.text("d"); // right after a batch: joined
    expect(sent).toHaveLength(2);
    vi.advanceTimersByTime(DELTA_WINDOW_MS);
    expect(sent.at(-1)).toEqual({ type: "text", text: "d" });
    vi.advanceTimersByTime(DELTA_WINDOW_MS); // quiet for a window: the next delta goes at once
    b.text("e");
    expect(sent.at(-1)).toEqual({ type: "text", text: "e" });
  });

  it("keeps the text whole and in order around other events, thinking and the size cap", () => {
    const { sent, b } = batcher();
    const big = "x".repeat(DELTA_MAX_CHARS);
    b.text("1");
    b.text("2");
    b.thinking("r", "hmm");
    b.thinking("r", "mm");
    b.event({ type: "tool-call", toolCallId: "c", toolName: "read_file", args: "{}" });
    b.text("3");
    b.text(big);
    b.text("4");
    b.flush();
    expect(sent).toEqual([
      { type: "text", text: "1" },
      { type: "text", text: "2" },
      { type: "thinking", id: "r", text: "hmmmm" },
      { type: "tool-call", toolCallId: "c", toolName: "read_file", args: "{}" },
      { type: "text", text: `3${big}` },
      { type: "text", text: "4" },
    ]);
  });
});
