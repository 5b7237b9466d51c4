import { describe, expect, it } from "vitest";
import type { Strategy } from "../../shared/strategy";
import { flowGraph, flowTree } from "./flow-graph";
import { parseStrategy } from "./loader";

const load = (flow: string) =>
  parseStrategy(
    `name: G\nversion: "1"\nagents: {a: {model: mock/echo}, b: {model: mock/echo}, c: {model: mock/echo}, d: {model: mock/echo}, o: {model: mock/echo}}\nflow: ${flow}\n`,
    { format: "yaml" },
  ).strategy;

const edges = (strategy: Strategy) => flowGraph(strategy).edges.map((e) => `${e.from} -${e.kind}-> ${e.to}`);

describe("flowTree", () => {
  it("is the strategy's flow object as written", () => {
    const strategy = load("{name: S, type: sequential, steps: [{agent: a}]}");
    expect(flowTree(strategy)).toBe(strategy.flow);
    expect(flowTree(strategy)).toEqual({ name: "S", type: "sequential", steps: [{ agent: "a" }] });
  });
});

describe("flowGraph", () => {
  it("chains a sequential flow", () => {
    const graph = flowGraph(load("{name: S, type: sequential, steps: [{agent: a}, {agent: b}, {agent: c}]}"));
    expect(graph.nodes).toEqual([
      { id: "flow", kind: "sequential", label: "S" },
      { id: "flow.steps.0", kind: "agent", agent: "a", label: "a", parent: "flow" },
      { id: "flow.steps.1", kind: "agent", agent: "b", label: "b", parent: "flow" },
      { id: "flow.steps.2", kind: "agent", agent: "c", label: "c", parent: "flow" },
    ]);
    expect(graph.edges.map((e) => e.kind)).toEqual(["next", "next"]);
  });

  it("draws a broadcast nested in a cycle with an observer", () => {
    const strategy = load("{type: cycle, observer: o, steps: [{agent: a}, {name: Fan, type: broadcast, steps: [{agent: b}, {agent: c}]}, {agent: d}]}");
    const graph = flowGraph(strategy);
    expect(graph.nodes).toHaveLength(7); // cycle, a, Fan, b, c, d, observer
    expect(graph.edges).toHaveLength(8);
    expect(graph.nodes.find((n) => n.id === "flow.steps.1")).toEqual({ id: "flow.steps.1", kind: "broadcast", label: "Fan", parent: "flow" });
    expect(graph.nodes.find((n) => n.id === "flow.observer")).toMatchObject({ kind: "agent", agent: "o", parent: "flow" });
    expect(edges(strategy)).toEqual([
      "flow.steps.1 -fanout-> flow.steps.1.steps.0",
      "flow.steps.1 -fanout-> flow.steps.1.steps.1",
      "flow.steps.1.steps.0 -fanin-> flow.steps.1",
      "flow.steps.1.steps.1 -fanin-> flow.steps.1",
      "flow.steps.0 -next-> flow.steps.1",
      "flow.steps.1 -next-> flow.steps.2",
      "flow.steps.2 -observe-> flow.observer",
      "flow.observer -loop-> flow.steps.0",
    ]);
  });

  it("loops a cycle without an observer from its last step to its first", () => {
    const strategy = load("{type: cycle, cycles: 2, steps: [{agent: a}, {type: broadcast, steps: [{agent: b}, {agent: c}]}]}");
    expect(flowGraph(strategy).nodes).toHaveLength(5);
    expect(edges(strategy).filter((e) => !e.includes("fan"))).toEqual(["flow.steps.0 -next-> flow.steps.1", "flow.steps.1 -loop-> flow.steps.0"]);
    expect(flowGraph(strategy).nodes.find((n) => n.id === "flow.steps.1")?.label).toBe("broadcast");
  });

  it("follows nesting to any depth, each node naming its parent", () => {
    const graph = flowGraph(load("{type: sequential, steps: [{type: broadcast, steps: [{type: cycle, steps: [{agent: a}]}]}]}"));
    expect(graph.nodes.map((n) => [n.id, n.kind, n.parent])).toEqual([
      ["flow", "sequential", undefined],
      ["flow.steps.0", "broadcast", "flow"],
      ["flow.steps.0.steps.0", "cycle", "flow.steps.0"],
      ["flow.steps.0.steps.0.steps.0", "agent", "flow.steps.0.steps.0"],
    ]);
    expect(graph.edges.map((e) => e.kind)).toEqual(["loop", "fanout", "fanin"]);
  });
});
