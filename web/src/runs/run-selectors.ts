import type { PendingRequest, Usage } from "../../../shared/runs";
import type { RouterOutputs } from "../trpc";
import type { AgentCall, CallStatus, RequestEntry, RunView } from "./run-model";

/** What the run page reads off a RunView (and the run it shows). */

export type RunInfo = RouterOutputs["runs"]["get"];
export type LiveStatus = RunInfo["status"];

export function openRequests(view: RunView): PendingRequest[] {
  return view.requestOrder.map((id) => view.requests[id]).filter((r): r is RequestEntry => !!r && !r.answer && !r.closed).map((r) => r.request);
}

const addUsage = (a: Usage, b: Usage | undefined): Usage => (b ? { promptTokens: a.promptTokens + b.promptTokens, completionTokens: a.completionTokens + b.completionTokens } : a);

/** Tokens of every call of the run, all segments. */
export function totalUsage(view: RunView): Usage {
  return view.calls.reduce((u, c) => addUsage(u, c.usage), { promptTokens: 0, completionTokens: 0 });
}

/** Agents in the order they first ran, with their calls and summed usage. */
export function agentsOf(view: RunView): Array<{ agentName: string; calls: AgentCall[]; usage: Usage; status: CallStatus }> {
  const byAgent = new Map<string, AgentCall[]>();
  for (const call of view.calls) {
    const list = byAgent.get(call.agentName) ?? [];
    list.push(call);
    byAgent.set(call.agentName, list);
  }
  return [...byAgent.entries()].map(([agentName, calls]) => ({
    agentName,
    calls,
    usage: calls.reduce((u, c) => addUsage(u, c.usage), { promptTokens: 0, completionTokens: 0 }),
    status: calls.at(-1)!.status,
  }));
}
