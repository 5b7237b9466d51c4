/** Pure helpers on the engine's step keys (no zod: the dashboard imports this). */

/**
 * Where a run step is in the flow graph. The engine's step keys are paths with cycle passes:
 * `f.0.p2.1` is pass 2 of the cycle at `flow.steps.0`, its step 1; `f.p3.obs` is the observer of
 * pass 3 of a top-level cycle. The graph's node ids are the same paths without passes
 * (`flow.steps.0.steps.1`, `flow.observer`).
 */
export function nodeOfStepKey(stepKey: string): { nodeId: string; passes: Array<{ cycleNodeId: string; pass: number }> } {
  const parts = stepKey.split(".").slice(1);
  let nodeId = "flow";
  const passes: Array<{ cycleNodeId: string; pass: number }> = [];
  for (const part of parts) {
    const pass = /^p(\d+)$/.exec(part);
    if (pass) passes.push({ cycleNodeId: nodeId, pass: Number(pass[1]) });
    else if (part === "obs") nodeId = `${nodeId}.observer`;
    else nodeId = `${nodeId}.steps.${part}`;
  }
  return { nodeId, passes };
}
