import { describe, expect, it } from "vitest";
import type { AgentOutputLine } from "../../../shared/agents";
import { BLOCK, blocksToAsk, LogPages, MAX_RUN, runsOf } from "./log-pages";

const lines = (from: number, to: number): AgentOutputLine[] =>
  Array.from({ length: to - from }, (_, i) => ({ line: from + i, session: 1, events: [{ kind: "text", text: `line ${from + i}` }], bytes: 10 }));

describe("LogPages", () => {
  it("opens on the head: the blocks it covers whole are held, the lines of a partly covered one are shown", () => {
    const total = 10 * BLOCK + 50; // last block: 50 lines
    const p = new LogPages();
    p.seed(lines(total - 300, total), total);
    expect(p.missing(0, 11)).toEqual([0, 1, 2, 3, 4, 5, 6, 7, 8]); // 9 (200 lines) and 10 (50) are whole
    expect(p.line(total - 1)?.line).toBe(total - 1);
    expect(p.line(total - 300)?.line).toBe(total - 300); // block 8, partly covered
    expect(p.line(0)).toBeUndefined();
  });

  it("a block asked for is not missing; one that arrives short of the total is missing again", () => {
    const p = new LogPages();
    p.seed([], 2 * BLOCK + 150);
    p.asked(1);
    expect(p.missing(0, 3)).toEqual([0, 2]);
    p.answered(1, lines(BLOCK, 2 * BLOCK - 10), 1); // read before the last lines were written
    expect(p.missing(1, 2)).toEqual([1]);
    p.answered(2, lines(2 * BLOCK, 2 * BLOCK + 150), 1);
    expect(p.missing(2, 3)).toEqual([]); // the last block, whole up to the total
    p.grew(3 * BLOCK + 5); // the log grew: block 2 ends short now, block 3 is new
    expect(p.missing(2, 4)).toEqual([2, 3]);
  });

  it("lists missing blocks nearest first, downwards too", () => {
    const p = new LogPages();
    p.seed([], 100 * BLOCK);
    p.answered(48, lines(48 * BLOCK, 49 * BLOCK), 48);
    expect(p.missing(50, 45)).toEqual([50, 49, 47, 46]);
  });

  it("keeps at most `max` blocks, dropping those farthest from the reader", () => {
    const p = new LogPages(3);
    p.seed([], 100 * BLOCK);
    for (const b of [10, 11, 12]) p.answered(b, lines(b * BLOCK, (b + 1) * BLOCK), 11);
    p.answered(50, lines(50 * BLOCK, 51 * BLOCK), 49); // the reader jumped near block 50
    expect(p.size).toBe(3);
    expect(p.line(10 * BLOCK)).toBeUndefined();
    expect(p.line(50 * BLOCK)?.line).toBe(50 * BLOCK);
  });
});

describe("runsOf", () => {
  it("groups consecutive blocks into runs of at most MAX_RUN", () => {
    expect(runsOf([5, 3, 4, 9])).toEqual([
      { from: 3, count: 3 },
      { from: 9, count: 1 },
    ]);
    const many = Array.from({ length: MAX_RUN + 2 }, (_, i) => i);
    expect(runsOf(many)).toEqual([
      { from: 0, count: MAX_RUN },
      { from: MAX_RUN, count: 2 },
    ]);
  });
});

describe("blocksToAsk", () => {
  const world = () => {
    const p = new LogPages();
    p.seed([], 5000 * BLOCK);
    return p;
  };
  const view = { firstBlock: 100, lastBlock: 100, blocks: 5000, aheadFrames: 20 };
  const sorted = (a: number[]) => [...a].sort((x, y) => x - y);

  it("at rest: the view and one block each side now, a few more each side later", () => {
    const { now, later } = blocksToAsk(world(), { ...view, pace: 0 });
    expect(sorted(now)).toEqual([99, 100, 101]);
    expect(sorted(later)).toEqual([97, 98, 102, 103]);
  });

  it("paging down: the view and the next blocks now, the blocks of the next frames at that pace later, in one go", () => {
    const p = world();
    const { now, later } = blocksToAsk(p, { ...view, pace: 135 });
    expect(now).toEqual([100, 101, 102]);
    expect(later).toEqual(Array.from({ length: 13 }, (_, i) => 103 + i)); // ceil(135 * 20 / 200) + 1 = 15 ahead
    for (const b of [...now, ...later]) p.asked(b);
    // the next frames find those asked for: nothing more until the reader nears the end of them
    expect(blocksToAsk(p, { ...view, firstBlock: 101, lastBlock: 101, pace: 135 })).toEqual({ now: [], later: [] });
    expect(blocksToAsk(p, { ...view, firstBlock: 108, lastBlock: 108, pace: 135 })).toEqual({ now: [], later: Array.from({ length: 8 }, (_, i) => 116 + i) });
  });

  it("paging up reads ahead downwards, and stops at the first line", () => {
    expect(blocksToAsk(world(), { ...view, firstBlock: 3, lastBlock: 3, pace: -135 })).toEqual({ now: [3, 2, 1], later: [0] });
  });
});
