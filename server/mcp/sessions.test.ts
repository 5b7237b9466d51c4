import { afterEach, describe, expect, it } from "vitest";
import { SessionRegistry, type SessionLimits } from "./sessions";

/** The bounds of the stateful HTTP sessions, on a clock the test moves. */

let registry: SessionRegistry | undefined;
afterEach(() => registry?.closeAll());

function world(limits: Partial<SessionLimits> = {}) {
  let now = 1_000;
  const closed: string[] = [];
  registry = new SessionRegistry({ max: 3, perAgent: 2, idleMs: 10_000, unclaimedMs: 2_000, ...limits }, () => now);
  const r = registry;
  const open = (id: string, owner = "human", route = "/mcp") => {
    expect(r.admit(owner)).toBe(true);
    return r.add({ id, owner, route, handleRequest: async () => {}, close: async () => void closed.push(id) });
  };
  return { r, open, closed, tick: (ms: number) => (now += ms) };
}

describe("SessionRegistry", () => {
  it("a session belongs to its owner and its path: anything else does not find it", () => {
    const { r, open } = world();
    open("s1", "agent:a1", "/mcp/agents/a1");
    expect(r.find("s1", "agent:a1", "/mcp/agents/a1")?.id).toBe("s1");
    expect(r.find("s1", "human", "/mcp/agents/a1")).toBeUndefined();
    expect(r.find("s1", "agent:a2", "/mcp/agents/a1")).toBeUndefined();
    expect(r.find("s1", "agent:a1", "/mcp")).toBeUndefined();
    expect(r.find("nope", "agent:a1", "/mcp/agents/a1")).toBeUndefined();
  });

  it("an agent past its limit loses its least recently used session, one without a stream first; others are untouched", () => {
    const { r, open, closed, tick } = world({ max: 10 });
    const a = open("a", "agent:x");
    tick(10);
    open("b", "agent:x");
    open("h", "human");
    r.streamOpened(a); // a is the older one, but it has a stream
    tick(10);
    open("c", "agent:x");
    expect(closed).toEqual(["b"]);
    tick(10);
    open("d", "agent:x");
    expect(closed).toEqual(["b", "c"]);
    expect(r.size).toBe(3);
    expect(r.find("a", "agent:x", "/mcp")).toBe(a);
    expect(r.find("h", "human", "/mcp")).toBeDefined();
  });

  it("a full server ends its least recently used session without a stream; when all have one, the newcomer goes without", () => {
    const { r, open, closed, tick } = world({ max: 2 });
    const s1 = open("s1");
    tick(10);
    open("s2");
    tick(10);
    r.find("s1", "human", "/mcp"); // s1 used since: s2 is the least recently used
    open("s3");
    expect(closed).toEqual(["s2"]);
    r.streamOpened(s1);
    r.streamOpened(r.find("s3", "human", "/mcp")!);
    expect(r.admit("human")).toBe(false);
    expect(r.size).toBe(2);
    r.streamClosed(s1);
    expect(r.admit("human")).toBe(true);
    expect(closed).toEqual(["s2", "s1"]);
  });

  it("idle sessions end after idleMs, never used ones after unclaimedMs; an open stream keeps one", () => {
    const { r, open, closed, tick } = world({ max: 10 });
    open("unclaimed");
    open("used");
    const streaming = open("streaming");
    r.find("used", "human", "/mcp");
    r.streamOpened(streaming);
    tick(2_001);
    r.sweep();
    expect(closed).toEqual(["unclaimed"]);
    tick(8_000);
    r.sweep();
    expect(closed).toEqual(["unclaimed", "used"]);
    expect(r.find("used", "human", "/mcp")).toBeUndefined();
    tick(60_000);
    r.sweep();
    expect(r.find("streaming", "human", "/mcp")).toBe(streaming);
    r.streamClosed(streaming);
    tick(10_001);
    r.sweep();
    expect(closed).toEqual(["unclaimed", "used", "streaming"]);
  });

  it("closeAll ends every session; remove forgets one that ended by itself", async () => {
    const { r, open, closed } = world();
    open("a");
    open("b");
    r.remove("a");
    await r.closeAll();
    expect(closed).toEqual(["b"]);
    expect(r.size).toBe(0);
  });
});
