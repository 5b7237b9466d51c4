/**
 * Reading a flow tree (the flow as written, `run.started.flowTree` or `strategies.get`) by the
 * graph's node ids: `flow`, `flow.steps.1`, `flow.steps.1.steps.0`.
 */
type FlowLike = { type?: unknown; steps?: unknown; observer?: unknown; cycles?: unknown; name?: unknown };

const isRecord = (v: unknown): v is Record<string, unknown> => typeof v === "object" && v !== null && !Array.isArray(v);

function walk(flow: unknown, id: string, visit: (flow: FlowLike, id: string) => void): void {
  if (!isRecord(flow) || !Array.isArray(flow.steps)) return;
  visit(flow, id);
  flow.steps.forEach((step, i) => walk(step, `${id}.steps.${i}`, visit));
}

/** Cycle node id -> its observer agent. */
export function observersOf(flowTree: unknown): Record<string, string> {
  const out: Record<string, string> = {};
  walk(flowTree, "flow", (flow, id) => {
    if (flow.type === "cycle" && typeof flow.observer === "string") out[id] = flow.observer;
  });
  return out;
}

/** Cycle node id -> its pass limit (`cycles`), when it has one. */
export function cycleLimitsOf(flowTree: unknown): Record<string, number> {
  const out: Record<string, number> = {};
  walk(flowTree, "flow", (flow, id) => {
    if (flow.type === "cycle" && typeof flow.cycles === "number") out[id] = flow.cycles;
  });
  return out;
}
