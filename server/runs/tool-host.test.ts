import { describe, expect, it } from "vitest";
import { StreamReached } from "./tool-host";

describe("StreamReached", () => {
  it("a tool waits until the stream reader reached its call; one reached before waits not at all", async () => {
    const reached = new StreamReached();
    const signal = new AbortController().signal;
    const order: string[] = [];
    const waiting = reached.upTo("call_1", signal).then(() => order.push("tool runs"));
    await Promise.resolve();
    order.push("text flushed");
    reached.reach("call_1");
    await waiting;
    expect(order).toEqual(["text flushed", "tool runs"]);
    reached.reach("call_2");
    await reached.upTo("call_2", signal);
  });

  it("an abort or the timeout ends the wait (a tool never hangs on it)", async () => {
    const reached = new StreamReached();
    const controller = new AbortController();
    const waiting = reached.upTo("call_1", controller.signal);
    controller.abort();
    await waiting;
    const started = Date.now();
    await reached.upTo("call_never", new AbortController().signal);
    expect(Date.now() - started).toBeGreaterThanOrEqual(1900);
  });
});
