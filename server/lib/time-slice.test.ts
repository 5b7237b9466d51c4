import { describe, expect, it } from "vitest";
import { SLICE_MIN_ITEMS, SLICE_MIN_MS, TimeSlice, TurnShare } from "./time-slice";

/** A clock the test moves by hand. */
function clock() {
  let t = 0;
  return { now: () => t, advance: (ms: number) => void (t += ms) };
}

describe("TimeSlice", () => {
  it("is due once the slice's time has passed, never before its first items", () => {
    const c = clock();
    const slice = new TimeSlice(new TurnShare(4, c.now));
    for (let i = 0; i < SLICE_MIN_ITEMS; i++) {
      expect(slice.due()).toBe(false);
      c.advance(10);
    }
    expect(slice.due()).toBe(true);
  });

  it("starts its clock at the first item: time spent waiting before it is not work", () => {
    const c = clock();
    const slice = new TimeSlice(new TurnShare(4, c.now));
    c.advance(1000);
    for (let i = 0; i <= SLICE_MIN_ITEMS; i++) expect(slice.due()).toBe(false);
    c.advance(4);
    expect(slice.due()).toBe(true);
  });

  it("yield lets every callback already waiting run first, then starts a fresh slice", async () => {
    const c = clock();
    const slice = new TimeSlice(new TurnShare(4, c.now));
    for (let i = 0; i <= SLICE_MIN_ITEMS; i++) slice.due();
    c.advance(5);
    expect(slice.due()).toBe(true);
    const order: string[] = [];
    setImmediate(() => order.push("waiting"));
    await slice.yield().then(() => order.push("slice"));
    expect(order).toEqual(["waiting", "slice"]);
    expect(slice.due()).toBe(false);
  });

  it("lasts one turn of the event loop at most: a reader that waited for its stream starts afresh", async () => {
    const c = clock();
    const slice = new TimeSlice(new TurnShare(4, c.now));
    for (let i = 0; i < SLICE_MIN_ITEMS; i++) slice.due();
    c.advance(5);
    await new Promise((resolve) => setImmediate(resolve)); // waiting for the next part: the loop goes round
    expect(slice.due()).toBe(false);
    for (let i = 0; i < SLICE_MIN_ITEMS - 1; i++) slice.due();
    c.advance(5);
    expect(slice.due()).toBe(true);
  });

  it("consumers split the turn's budget; a closed one gives its share back", () => {
    const share = new TurnShare(4, clock().now);
    const slices = Array.from({ length: 4 }, () => new TimeSlice(share));
    for (const s of slices) s.due();
    expect(share.active).toBe(4);
    expect(share.sliceMs()).toBe(1);
    for (let i = 0; i < 100; i++) new TimeSlice(share).due();
    expect(share.sliceMs()).toBe(SLICE_MIN_MS);
    slices[0]!.close();
    slices[0]!.close();
    expect(share.active).toBe(103);
  });

  it("parallel consumers take turns, each in its own order", async () => {
    const c = clock();
    const share = new TurnShare(4, () => (c.advance(1), c.now()));
    const seen: string[] = [];
    const consume = async (name: string) => {
      const slice = new TimeSlice(share);
      for (let i = 0; i < 40; i++) {
        if (slice.due()) await slice.yield();
        seen.push(`${name}${i}`);
      }
      slice.close();
    };
    await Promise.all([consume("a"), consume("b")]);
    const of = (name: string) => seen.filter((s) => s.startsWith(name));
    expect(of("a")).toEqual(Array.from({ length: 40 }, (_, i) => `a${i}`));
    expect(of("b")).toEqual(Array.from({ length: 40 }, (_, i) => `b${i}`));
    // b ran before a was done: the two interleave
    expect(seen.indexOf("b0")).toBeLessThan(seen.indexOf("a39"));
    expect(share.active).toBe(0);
  });
});
