import { describe, expect, it } from "vitest";
import { OnEventInput } from "../../shared/api";
import { currentEventType, EventCatalog, RenamedEvents } from "../../shared/events";

/** Irregular past tenses a name may use; the rest end in -ed. */
const IRREGULAR = new Set(["ran", "went", "kept", "spent", "sent", "made", "took", "lost", "began", "held", "built", "became"]);

describe("event names", () => {
  it("are <domain>.<past tense>", () => {
    for (const type of Object.keys(EventCatalog)) {
      const [domain, action, ...rest] = type.split(".");
      expect(rest, type).toEqual([]);
      expect(domain, type).toMatch(/^[a-z]+$/);
      const words = action!.split("_");
      expect(
        words.some((w) => w.endsWith("ed") || IRREGULAR.has(w)),
        `${type}: say what happened, in the past tense`,
      ).toBe(true);
    }
  });

  it("map each old name to a catalogue name, and no old name is in the catalogue", () => {
    for (const [old, now] of Object.entries(RenamedEvents)) {
      expect(Object.keys(EventCatalog)).toContain(now);
      expect(Object.keys(EventCatalog)).not.toContain(old);
      expect(currentEventType(old)).toBe(now);
      expect(currentEventType(now)).toBe(now);
    }
    expect(currentEventType("run.completed")).toBe("run.completed");
    expect(currentEventType("toString")).toBe("toString");
  });

  it("filter a subscription by old or new names, as the new names", () => {
    expect(OnEventInput.parse({ types: ["agent.idle", "agent.went_idle", "run.completed"] }).types).toEqual(["agent.went_idle", "agent.went_idle", "run.completed"]);
    const refused = OnEventInput.safeParse({ types: ["agent.napping"] });
    expect(refused.success).toBe(false);
    expect(refused.error?.issues[0]).toMatchObject({ path: ["types", 0], message: expect.stringContaining('got "agent.napping"') as unknown });
    expect(OnEventInput.safeParse({ types: [] }).success).toBe(false);
  });
});
