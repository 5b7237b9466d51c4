import { describe, expect, it } from "vitest";
import { WriteGate } from "./write-gate";

describe("WriteGate", () => {
  it("runs synchronously when free, and after the holder when held", async () => {
    const gate = new WriteGate();
    const order: string[] = [];
    expect(gate.run(() => "now")).toBe("now");
    const held = gate.exclusive(async () => {
      order.push("tx begin");
      await Promise.resolve();
      await Promise.resolve();
      order.push("tx end");
    });
    expect(gate.busy).toBe(true);
    const later = gate.run(() => order.push("other write"));
    expect(later).toBeInstanceOf(Promise);
    await Promise.all([held, later]);
    expect(order).toEqual(["tx begin", "tx end", "other write"]);
    expect(gate.busy).toBe(false);
  });

  it("lets one transaction at a time hold the connection, in the order they asked", async () => {
    const gate = new WriteGate();
    const order: number[] = [];
    await Promise.all(
      [1, 2, 3].map((n) =>
        gate.exclusive(async () => {
          order.push(n);
          await new Promise((r) => setTimeout(r, 5));
          order.push(-n);
        }),
      ),
    );
    expect(order).toEqual([1, -1, 2, -2, 3, -3]);
  });

  it("refuses a transaction opened inside another, instead of waiting forever", async () => {
    const gate = new WriteGate();
    await expect(gate.exclusive(() => gate.exclusive(async () => 1))).rejects.toThrow(/inside another one/);
    expect(gate.busy).toBe(false);
  });

  it("frees the connection when the holder throws", async () => {
    const gate = new WriteGate();
    await expect(gate.exclusive(async () => { throw new Error("boom"); })).rejects.toThrow("boom");
    expect(gate.run(() => 1)).toBe(1);
  });
});
