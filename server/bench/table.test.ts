import { describe, expect, it } from "vitest";
import { goalRows, median, printTable, summary, verdict, type BenchRow } from "./table";

const row = (over: Partial<BenchRow> = {}): BenchRow => ({ bench: "b", metric: "m", value: "1", goal: "< 2", met: true, load: 0.1, ...over });

describe("bench verdicts", () => {
  it("a goal measured on a quiet machine is MET or MISSED", () => {
    expect(verdict(row())).toBe("MET");
    expect(verdict(row({ met: false }))).toBe("MISSED");
  });

  it("above 0.3 load (or an unknown load) a row is NOISY, met or not", () => {
    expect(verdict(row({ load: 0.31 }))).toBe("NOISY");
    expect(verdict(row({ load: 0.31, met: false }))).toBe("NOISY");
    expect(verdict(row({ load: undefined }))).toBe("NOISY");
    expect(verdict(row({ load: 0.3 }))).toBe("MET");
  });

  it("a size is never NOISY; a row without a goal has no verdict", () => {
    expect(verdict(row({ load: 2, size: true }))).toBe("MET");
    expect(verdict(row({ met: undefined, goal: "-" }))).toBe("-");
  });

  it("what arrived short of what was sent (or changed) is MISSED, whatever the load", () => {
    expect(verdict(row({ load: 2, count: { sent: 10, arrived: 9, unit: "x" } }))).toBe("MISSED");
    expect(verdict(row({ count: { sent: 10, arrived: 10, unit: "x", intact: false } }))).toBe("MISSED");
    expect(verdict(row({ count: { sent: 10, arrived: 10, unit: "x" } }))).toBe("MET");
  });

  it("counts distinct goals and refuses two rows for one goal", () => {
    const rows = [row(), row({ metric: "n", load: 1 }), row({ metric: "o", met: false }), row({ metric: "limit", met: undefined, goal: "-" })];
    expect(summary(rows)).toMatch(/^3 distinct goals: 1 met, 1 missed, 1 noisy/);
    expect(printTable(rows)).toContain("| NOISY  |");
    expect(() => goalRows([row(), row()])).toThrow(/two rows for one goal/);
  });

  it("the median is a measured value (the lower middle)", () => {
    expect(median([3, 1, 2])).toBe(2);
    expect(median([4, 1, 3, 2])).toBe(2);
  });
});
