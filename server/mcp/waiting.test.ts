import { describe, expect, it } from "vitest";
import { z } from "zod";
import { getRun } from "./tools/runs";
import { waitForAgent } from "./tools/agents";
import { ask } from "./tools/conversations";
import { MAX_WAIT_SECONDS, timeoutSeconds } from "./waiting";

describe("timeoutSeconds of the waiting tools", () => {
  it("caps a wait past 50 s at 50 instead of refusing it; refuses a negative one", () => {
    const t = timeoutSeconds(50);
    expect(t.parse(undefined)).toBe(50);
    expect(t.parse(3)).toBe(3);
    expect(t.parse(60)).toBe(MAX_WAIT_SECONDS);
    expect(t.parse(3600)).toBe(MAX_WAIT_SECONDS);
    expect(t.safeParse(-1).success).toBe(false);
    expect(t.safeParse("60").success).toBe(false);
  });

  it("every waiting tool takes 60+ and waits 50, and says so in the schema it publishes", () => {
    expect(waitForAgent.input.parse({ agentId: "a", timeoutSeconds: 60 }).timeoutSeconds).toBe(50);
    expect(ask.input.parse({ conversationId: "c", timeoutSeconds: 120 }).timeoutSeconds).toBe(50);
    expect(getRun.input.parse({ runId: "r", wait: true, timeoutSeconds: 90 }).timeoutSeconds).toBe(50);
    const published = z.toJSONSchema(waitForAgent.input, { io: "input" }) as { properties: Record<string, { maximum?: number; description?: string }> };
    expect(published.properties.timeoutSeconds).not.toHaveProperty("maximum");
    expect(published.properties.timeoutSeconds!.description).toMatch(/at most 50: a larger value waits 50/);
  });
});
