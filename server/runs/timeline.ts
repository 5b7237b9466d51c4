import type { BusEvent } from "../../shared/events";
import type { AgentCallRecord, PendingRequest, StepResult, Usage } from "../../shared/runs";
import type { EventStorage } from "../events/event-store";
import { emptyMemo, requestKey, type Memo } from "./run-state";

/** A run's persisted timeline (its events in the store, scope runId), read back. */
export async function readRunEvents(store: EventStorage, runId: string): Promise<BusEvent[]> {
  const out: BusEvent[] = [];
  for (let after = 0; ; ) {
    const page = await store.readAfter(after, { kind: "run", id: runId }, 5000);
    if (page.length === 0) return out;
    out.push(...page);
    after = page[page.length - 1]!.id;
  }
}

export type SegmentState = {
  started?: BusEvent<"run.started">;
  completed?: BusEvent<"run.completed">;
  memo: Memo;
  usage: Usage;
};

/** Every agent call of every segment, in order: the conversations a continuation restores. */
export function agentRecords(events: BusEvent[]): AgentCallRecord[] {
  return events.filter((e): e is BusEvent<"run.agent_called"> => e.type === "run.agent_called").map((e) => e.payload.record);
}

/** Human inputs of the run, as the protocol's `conversation.inputs`. */
export function humanInputs(events: BusEvent[]): Array<{ agentName: string; text: string; source: string; ts: string }> {
  const out: Array<{ agentName: string; text: string; source: string; ts: string }> = [];
  for (const e of events) {
    if (e.type === "run.request_answered" && e.payload.kind === "input") out.push({ agentName: e.payload.agentName, text: e.payload.answer, source: e.payload.source, ts: e.ts });
    if (e.type === "run.steer_applied") out.push({ agentName: e.payload.agentName, text: e.payload.text, source: "human", ts: e.ts });
  }
  return out;
}

/** The latest segment: where it stands, what it completed, what it still waits on. */
export function lastSegment(events: BusEvent[]): SegmentState {
  let start = -1;
  for (let i = events.length - 1; i >= 0; i--) {
    if (events[i]!.type === "run.started") {
      start = i;
      break;
    }
  }
  const state: SegmentState = { memo: emptyMemo(), usage: { promptTokens: 0, completionTokens: 0 } };
  if (start < 0) return state;
  state.started = events[start] as BusEvent<"run.started">;
  const open = new Map<string, PendingRequest>();
  for (const e of events.slice(start + 1)) {
    switch (e.type) {
      case "run.step_started":
        state.memo.startedSteps.add(e.payload.stepKey);
        break;
      case "run.step_completed":
        state.memo.steps.set(e.payload.stepKey, e.payload.result as StepResult);
        break;
      case "run.agent_called":
        if (e.payload.record.stepKey) state.memo.calls.set(e.payload.record.stepKey, e.payload.record);
        break;
      case "run.agent_responded":
        state.usage.promptTokens += e.payload.usage.promptTokens;
        state.usage.completionTokens += e.payload.usage.completionTokens;
        break;
      case "run.cli_agent_started":
        state.memo.cliAgents.set(e.payload.stepKey, e.payload.agentId);
        break;
      case "run.request_opened":
        open.set(e.payload.request.requestId, e.payload.request);
        break;
      case "run.request_answered":
        open.delete(e.payload.requestId);
        break;
      case "run.completed":
        state.completed = e as BusEvent<"run.completed">;
        break;
      default:
        break;
    }
  }
  for (const r of open.values()) {
    const extra = r.kind === "permission" ? { toolName: r.toolName, resource: r.resource } : r.kind === "question" ? { toolName: r.toolName, question: r.question } : {};
    state.memo.openRequests.set(requestKey({ ...r, ...extra }), r);
  }
  return state;
}
