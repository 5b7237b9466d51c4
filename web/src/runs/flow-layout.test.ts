import { describe, expect, it } from "vitest";
import type { FlowGraph } from "../../../shared/strategy";
import { layoutFlowGraph } from "./flow-layout";

/** sequential: plan -> broadcast(a, b) -> cycle(writer; observer editor), as flowGraph builds it. */
const graph: FlowGraph = {
  nodes: [
    { id: "flow", kind: "sequential", label: "Demo" },
    { id: "flow.steps.0", kind: "agent", agent: "plan", label: "plan", parent: "flow" },
    { id: "flow.steps.1", kind: "broadcast", label: "Reviews", parent: "flow" },
    { id: "flow.steps.1.steps.0", kind: "agent", agent: "a", label: "a", parent: "flow.steps.1" },
    { id: "flow.steps.1.steps.1", kind: "agent", agent: "b", label: "b", parent: "flow.steps.1" },
    { id: "flow.steps.2", kind: "cycle", label: "Refine", parent: "flow" },
    { id: "flow.steps.2.steps.0", kind: "agent", agent: "writer", label: "writer", parent: "flow.steps.2" },
    { id: "flow.steps.2.observer", kind: "agent", agent: "editor", label: "editor", parent: "flow.steps.2" },
  ],
  edges: [
    { from: "flow.steps.0", to: "flow.steps.1", kind: "next" },
    { from: "flow.steps.1", to: "flow.steps.2", kind: "next" },
    { from: "flow.steps.1", to: "flow.steps.1.steps.0", kind: "fanout" },
    { from: "flow.steps.1", to: "flow.steps.1.steps.1", kind: "fanout" },
    { from: "flow.steps.1.steps.0", to: "flow.steps.1", kind: "fanin" },
    { from: "flow.steps.1.steps.1", to: "flow.steps.1", kind: "fanin" },
    { from: "flow.steps.2.steps.0", to: "flow.steps.2.observer", kind: "observe" },
    { from: "flow.steps.2.observer", to: "flow.steps.2.steps.0", kind: "loop" },
  ],
};

describe("layoutFlowGraph", () => {
  const layout = layoutFlowGraph(graph);
  const box = (id: string) => layout.boxes.find((b) => b.id === id)!;

  it("places every node once and draws every edge", () => {
    expect(layout.boxes.map((b) => b.id).sort()).toEqual(graph.nodes.map((n) => n.id).sort());
    expect(layout.edges).toHaveLength(graph.edges.length);
    for (const edge of layout.edges) expect(edge.d).toMatch(/^M [\d.]+ [\d.]+ /);
  });

  it("nests steps inside their flow's box, sequential left to right, broadcast stacked", () => {
    for (const node of graph.nodes.filter((n) => n.parent)) {
      const child = box(node.id);
      const parent = box(node.parent!);
      expect(child.x).toBeGreaterThan(parent.x);
      expect(child.y).toBeGreaterThan(parent.y);
      expect(child.x + child.w).toBeLessThan(parent.x + parent.w);
      expect(child.y + child.h).toBeLessThan(parent.y + parent.h);
    }
    expect(box("flow.steps.1").x).toBeGreaterThan(box("flow.steps.0").x + box("flow.steps.0").w);
    expect(box("flow.steps.1.steps.1").y).toBeGreaterThan(box("flow.steps.1.steps.0").y + box("flow.steps.1.steps.0").h);
    expect(box("flow.steps.2.observer").x).toBeGreaterThan(box("flow.steps.2.steps.0").x);
    expect(layout.width).toBeGreaterThanOrEqual(box("flow").w);
  });

  it("draws containers before agents (agents on top)", () => {
    const kinds = layout.boxes.map((b) => b.kind === "agent");
    expect(kinds.indexOf(true)).toBe(kinds.lastIndexOf(false) + 1);
  });
});
