import { nodeOfStepKey } from "../../../shared/step-keys";

/**
 * Where an observer call sits: the innermost cycle (around the latest step) whose observer is
 * this agent. `f.0.p2.1` -> `f.0.p2.obs` (node `flow.steps.0.observer`, pass 2).
 */
export function observerStep(lastStepKey: string | undefined, agentName: string, observers: Record<string, string>): { stepKey: string; nodeId: string; pass: number } | undefined {
  if (!lastStepKey) return undefined;
  const parts = lastStepKey.split(".");
  let fallback: { stepKey: string; nodeId: string; pass: number } | undefined;
  for (let i = parts.length - 1; i > 0; i--) {
    const m = /^p(\d+)$/.exec(parts[i]!);
    if (!m) continue;
    const prefix = parts.slice(0, i + 1).join(".");
    const cycleNodeId = nodeOfStepKey(prefix).nodeId;
    const found = { stepKey: `${prefix}.obs`, nodeId: `${cycleNodeId}.observer`, pass: Number(m[1]) };
    if (observers[cycleNodeId] === agentName) return found;
    fallback ??= found;
  }
  return Object.keys(observers).length === 0 ? fallback : undefined;
}
