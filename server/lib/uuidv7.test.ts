import { describe, expect, it } from "vitest";
import { uuidv7 } from "./uuidv7";

describe("uuidv7", () => {
  it("has version 7, the RFC variant, and the time in its first 48 bits", () => {
    const now = Date.UTC(2026, 10, 22, 9, 30);
    const id = uuidv7(now);
    expect(id).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    expect(parseInt(id.replace(/-/g, "").slice(0, 12), 16)).toBe(now);
  });

  it("sorts by creation time", () => {
    expect(uuidv7(1000) < uuidv7(2000)).toBe(true);
  });
});
