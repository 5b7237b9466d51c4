import {
  isAgentStep,
  isCycleFlow,
  type Flow,
  type FlowGraph,
  type FlowGraphEdge,
  type FlowGraphNode,
  type FlowStep,
  type Strategy,
} from "../../shared/strategy";

/** What the protocol sends as `flowTree` (run_prepared, strategy_started): the flow as written. */
export function flowTree(strategy: Strategy): Flow {
  return strategy.flow;
}

/**
 * The flow as a graph for the dashboard. Every step is a node whose id is its path in the file
 * (`flow`, `flow.steps.1`, `flow.steps.1.steps.0`); a flow node contains its steps (`parent`),
 * and a cycle's observer is a node `<cycle>.observer`. Edges link the steps of one flow, and a
 * nested flow is linked as a whole (through its own node):
 * - sequential (and custom types): `next` from each step to the following one;
 * - broadcast: `fanout` from the broadcast node to each step, `fanin` from each step back to it
 *   (the broadcast node is both the fork and the join);
 * - cycle: `next` between steps, then `loop` from the last step back to the first; with an
 *   observer, `observe` from the last step to the observer and `loop` from it to the first step.
 */
export function flowGraph(strategy: Strategy): FlowGraph {
  const graph: FlowGraph = { nodes: [], edges: [] };
  addFlow(graph, strategy.flow, "flow", undefined);
  return graph;
}

function addStep(graph: FlowGraph, step: FlowStep, id: string, parent: string): void {
  if (isAgentStep(step)) graph.nodes.push({ id, kind: "agent", agent: step.agent, label: step.agent, parent });
  else addFlow(graph, step, id, parent);
}

function addFlow(graph: FlowGraph, flow: Flow, id: string, parent: string | undefined): void {
  const kind = kindOf(flow.type);
  graph.nodes.push({ id, kind, label: flow.name ?? flow.type, ...(parent ? { parent } : {}) });
  const ids = flow.steps.map((step, i) => {
    const stepId = `${id}.steps.${i}`;
    addStep(graph, step, stepId, id);
    return stepId;
  });
  const edge = (from: string, to: string, kind: FlowGraphEdge["kind"]) => graph.edges.push({ from, to, kind });
  const first = ids[0];
  const last = ids[ids.length - 1];
  if (kind === "broadcast") {
    for (const stepId of ids) edge(id, stepId, "fanout");
    for (const stepId of ids) edge(stepId, id, "fanin");
    return;
  }
  ids.slice(1).forEach((stepId, i) => edge(ids[i] as string, stepId, "next"));
  if (!isCycleFlow(flow) || !first || !last) return;
  const observer = flow.observer;
  if (!observer) return void edge(last, first, "loop");
  const observerId = `${id}.observer`;
  graph.nodes.push({ id: observerId, kind: "agent", agent: observer, label: observer, parent: id });
  edge(last, observerId, "observe");
  edge(observerId, first, "loop");
}

function kindOf(type: string): FlowGraphNode["kind"] {
  return type === "sequential" || type === "broadcast" || type === "cycle" ? type : "custom";
}
