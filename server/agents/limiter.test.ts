import { describe, expect, it } from "vitest";
import { Limiter } from "./limiter";

describe("Limiter", () => {
  it("runs at most max tasks at once, the rest in order of arrival, and passes results and errors through", async () => {
    const limiter = new Limiter(2);
    let running = 0;
    let most = 0;
    const started: number[] = [];
    const task = (i: number) => async () => {
      started.push(i);
      running++;
      most = Math.max(most, running);
      await new Promise((r) => setTimeout(r, 5));
      running--;
      if (i === 3) throw new Error("task 3 failed");
      return i * 10;
    };
    const results = await Promise.allSettled([0, 1, 2, 3, 4, 5].map((i) => limiter.run(task(i))));
    expect(most).toBe(2);
    expect(started).toEqual([0, 1, 2, 3, 4, 5]);
    expect(results.map((r) => (r.status === "fulfilled" ? r.value : (r.reason as Error).message))).toEqual([0, 10, 20, "task 3 failed", 40, 50]);
    // every slot came back: two more run at once (each waits until both have started)
    let arrived = 0;
    let release!: () => void;
    const both = new Promise<void>((r) => (release = r));
    const meet = () =>
      limiter.run(async () => {
        if (++arrived === 2) release();
        await both;
      });
    await Promise.all([meet(), meet()]);
    expect(arrived).toBe(2);
  });
});
