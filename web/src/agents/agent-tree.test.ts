import { describe, expect, it } from "vitest";
import { treeOrder } from "./agent-tree";

const a = (id: string, parentAgentId: string | null = null) => ({ id, parentAgentId });

describe("treeOrder", () => {
  it("puts each agent's children (and theirs) right after it, keeping the list's order otherwise", () => {
    const list = [a("c2", "p"), a("solo"), a("g", "c1"), a("c1", "p"), a("p"), a("orphan", "gone")];
    expect(treeOrder(list).map((x) => `${"-".repeat(x.depth)}${x.agent.id}`)).toEqual(["solo", "p", "-c2", "-c1", "--g", "orphan"]);
  });

  it("lists every agent exactly once", () => {
    const list = [a("x"), a("y", "x"), a("z", "y")];
    expect(treeOrder(list)).toHaveLength(3);
  });
});
