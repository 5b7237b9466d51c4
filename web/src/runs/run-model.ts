import type { BusEvent } from "../../../shared/events";
import type { PendingRequest, PermissionDecision, Usage } from "../../../shared/runs";
import { nodeOfStepKey } from "../../../shared/step-keys";
import { observersOf } from "./flow-tree";
import { observerStep } from "./step-keys";
import { appendStreamItem, findLastIndex, type StreamItem } from "./stream-items";

/**
 * A run's events folded into what the run page shows: segments, node statuses, passes, each
 * agent call's stream, requests, steering. Pure and incremental: `applyEvents` skips any event
 * at or below `lastId`, so a replay after a reconnect (or a StrictMode double subscription)
 * repeats nothing.
 */

export type NodeStatus = "pending" | "running" | "completed" | "error" | "waiting";
export type SegmentStatus = "running" | "completed" | "error" | "cancelled";
export type CallStatus = "running" | "waiting" | "completed" | "error" | "cancelled";

/** One call of one agent: a step (or an observer's turn), its input and what it streamed. */
export type AgentCall = {
  /** Unique: the id of the event that opened the call. */
  key: string;
  agentName: string;
  segment: number;
  stepKey?: string;
  nodeId?: string;
  /** The innermost cycle pass the call ran in. */
  pass?: number;
  input?: string;
  model?: string;
  contextWindow?: number;
  items: StreamItem[];
  usage?: Usage;
  status: CallStatus;
  /** Why it ended early (the segment's error, for the calls it interrupted). */
  error?: string;
  startedAt: string;
  /** Still taking stream events (an LLM call closes on `done`, a user step on step_completed). */
  open: boolean;
};

export type Segment = {
  segment: number;
  input: string;
  continuation: boolean;
  startedAt: string;
  endedAt?: string;
  status: SegmentStatus;
  result?: string;
  error?: { code: string; message: string };
  usage?: Usage;
  modelOverride?: string;
};

export type RequestEntry = {
  request: PendingRequest;
  segment: number;
  answer?: { text: string; decision?: PermissionDecision; source: string; at: string };
  /** The segment ended before it was answered. */
  closed?: boolean;
};

export type Steer = { id: number; text: string; at: string; appliedTo?: string };

export type RunView = {
  lastId: number;
  segments: Segment[];
  /** Status of each graph node in the latest segment (absent = pending). */
  nodes: Record<string, NodeStatus>;
  /** Latest pass of each cycle node in the latest segment. */
  passes: Record<string, number>;
  calls: AgentCall[];
  requests: Record<string, RequestEntry>;
  requestOrder: string[];
  steers: Steer[];
  warnings: Array<{ message: string; path?: string }>;
  /** Cycle node id -> its observer agent, from the latest run.started flowTree. */
  observers: Record<string, string>;
  /** The latest step key of the segment (where an observer call sits). */
  lastStepKey?: string;
  /** CLI agents of `type: cli` nodes, by graph node id (the latest per node). */
  cliAgents: Record<string, CliAgentRef>;
  /** Spend of the latest segment against the run's budget. */
  spend?: { tokens: number; usd: number; budget?: { tokens?: number; usd?: number } };
};

export type CliAgentRef = { agentId: string; alias: string; provider: string; branch: string | null };

export function emptyRunView(): RunView {
  return { lastId: 0, segments: [], nodes: {}, passes: {}, calls: [], requests: {}, requestOrder: [], steers: [], warnings: [], observers: {}, cliAgents: {} };
}

/** Fold events in (any order within the batch; ids at or below lastId are dropped). */
export function applyEvents(view: RunView, events: readonly BusEvent[]): RunView {
  const fresh = events.filter((e) => e.id > view.lastId);
  if (fresh.length === 0) return view;
  const sorted = isAscending(fresh) ? fresh : [...new Map(fresh.map((e) => [e.id, e])).values()].sort((a, b) => a.id - b.id);
  let next = view;
  for (const event of sorted) {
    if (event.id <= next.lastId) continue;
    next = { ...applyEvent(next, event), lastId: event.id };
  }
  return next;
}

function isAscending(events: readonly BusEvent[]): boolean {
  for (let i = 1; i < events.length; i++) if (events[i]!.id <= events[i - 1]!.id) return false;
  return true;
}

function applyEvent(view: RunView, event: BusEvent): RunView {
  switch (event.type) {
    case "run.started":
      return segmentStarted(view, event);
    case "run.step_started":
      return stepStarted(view, event);
    case "run.step_completed":
      return stepCompleted(view, event.payload.stepKey);
    case "run.agent_streamed":
      return streamed(view, event);
    case "run.agent_responded":
      return updateLastCall(view, event.payload.agentName, (c) => ({ ...c, usage: event.payload.usage, model: event.payload.model ?? c.model }));
    case "run.agent_called":
      return agentCalled(view, event);
    case "run.request_opened":
      return requestOpened(view, event);
    case "run.request_answered":
      return requestAnswered(view, event);
    case "run.steer_queued":
      return { ...view, steers: [...view.steers, { id: event.id, text: event.payload.text, at: event.ts }] };
    case "run.steer_applied":
      return steerApplied(view, event);
    case "run.command_ran": {
      const { agentName: _agent, stepKey: _step, ...command } = event.payload;
      return updateLastCall(view, event.payload.agentName, (c) => ({ ...c, items: [...c.items, { kind: "command", ...command }] }));
    }
    case "run.warned":
      return { ...view, warnings: [...view.warnings, { message: event.payload.message, path: event.payload.path }] };
    case "run.cli_agent_started": {
      const p = event.payload;
      const { nodeId } = nodeOfStepKey(p.stepKey);
      return { ...view, cliAgents: { ...view.cliAgents, [nodeId]: { agentId: p.agentId, alias: p.alias, provider: p.provider, branch: p.branch } } };
    }
    case "run.spend_updated":
      return { ...view, spend: { tokens: event.payload.tokens, usd: event.payload.usd, ...(event.payload.budget ? { budget: event.payload.budget } : {}) } };
    case "run.completed":
      return segmentCompleted(view, event);
    default:
      return view;
  }
}

const currentSegment = (view: RunView) => view.segments.at(-1)?.segment ?? 0;

function segmentStarted(view: RunView, event: BusEvent<"run.started">): RunView {
  const p = event.payload;
  const segment: Segment = {
    segment: p.segment,
    input: p.initialInput ?? "",
    continuation: p.continuation,
    startedAt: event.ts,
    status: "running",
    ...(p.modelOverride ? { modelOverride: p.modelOverride } : {}),
  };
  const segments = [...view.segments.filter((s) => s.segment !== p.segment), segment];
  return { ...view, segments, nodes: {}, passes: {}, observers: observersOf(p.flowTree), lastStepKey: undefined, spend: undefined };
}

function passesOf(view: RunView, stepKey: string): { nodeId: string; passes: Record<string, number>; pass?: number } {
  const { nodeId, passes } = nodeOfStepKey(stepKey);
  if (passes.length === 0) return { nodeId, passes: view.passes };
  const next = { ...view.passes };
  for (const p of passes) next[p.cycleNodeId] = p.pass;
  return { nodeId, passes: next, pass: passes.at(-1)?.pass };
}

function stepStarted(view: RunView, event: BusEvent<"run.step_started">): RunView {
  const { stepName, stepKey, message } = event.payload;
  const { nodeId, passes, pass } = passesOf(view, stepKey);
  const call: AgentCall = {
    key: String(event.id),
    agentName: stepName,
    segment: currentSegment(view),
    stepKey,
    nodeId,
    ...(pass !== undefined ? { pass } : {}),
    input: message,
    items: [],
    status: "running",
    startedAt: event.ts,
    open: true,
  };
  return { ...view, passes, nodes: { ...view.nodes, [nodeId]: "running" }, calls: [...view.calls, call], lastStepKey: stepKey };
}

function stepCompleted(view: RunView, stepKey: string): RunView {
  const { nodeId } = nodeOfStepKey(stepKey);
  const calls = view.calls.map((c) => (c.stepKey === stepKey && c.segment === currentSegment(view) && c.status !== "completed" ? { ...c, status: "completed" as const, open: false } : c));
  return { ...view, calls, nodes: { ...view.nodes, [nodeId]: "completed" }, lastStepKey: stepKey };
}

/** Index of the call an agent's stream event belongs to: its oldest open call. */
function openCallIndex(view: RunView, agentName: string): number {
  return view.calls.findIndex((c) => c.open && c.agentName === agentName);
}

function openObserverCall(view: RunView, event: BusEvent<"run.agent_streamed">): RunView {
  const { agentName } = event.payload;
  const where = observerStep(view.lastStepKey, agentName, view.observers);
  const call: AgentCall = {
    key: String(event.id),
    agentName,
    segment: currentSegment(view),
    ...(where ? { stepKey: where.stepKey, nodeId: where.nodeId, pass: where.pass } : {}),
    items: [],
    status: "running",
    startedAt: event.ts,
    open: true,
  };
  const nodes = where ? { ...view.nodes, [where.nodeId]: "running" as const } : view.nodes;
  return { ...view, nodes, calls: [...view.calls, call] };
}

function streamed(view: RunView, event: BusEvent<"run.agent_streamed">): RunView {
  const { agentName, model, contextWindow } = event.payload;
  let next = view;
  let index = openCallIndex(next, agentName);
  if (index < 0) {
    next = openObserverCall(next, event);
    index = next.calls.length - 1;
  }
  const call = next.calls[index]!;
  let updated: AgentCall = { ...call, model: model ?? call.model, contextWindow: contextWindow ?? call.contextWindow, items: appendStreamItem(call.items, event.payload.event) };
  if (event.payload.event.type === "done") {
    updated = { ...updated, open: false, status: "completed", usage: updated.usage ?? event.payload.event.result.usage };
  }
  const calls = next.calls.slice();
  calls[index] = updated;
  let nodes = next.nodes;
  // An observer has no step events: its node completes with its call.
  if (event.payload.event.type === "done" && updated.stepKey?.endsWith(".obs") && updated.nodeId) nodes = { ...nodes, [updated.nodeId]: "completed" };
  return { ...next, calls, nodes };
}

/** The agent's open call, else its latest call of this segment. */
function updateLastCall(view: RunView, agentName: string, update: (call: AgentCall) => AgentCall): RunView {
  let index = openCallIndex(view, agentName);
  if (index < 0) index = findLastIndex(view.calls, (c) => c.agentName === agentName && c.segment === currentSegment(view));
  if (index < 0) return view;
  const calls = view.calls.slice();
  calls[index] = update(calls[index]!);
  return { ...view, calls };
}

function agentCalled(view: RunView, event: BusEvent<"run.agent_called">): RunView {
  const { stepKey, agentName } = event.payload.record;
  if (!stepKey) return view;
  const index = findLastIndex(view.calls, (c) => c.agentName === agentName && c.segment === currentSegment(view) && (c.stepKey === stepKey || c.stepKey === undefined));
  if (index < 0) return view;
  const { nodeId, passes } = nodeOfStepKey(stepKey);
  const calls = view.calls.slice();
  calls[index] = { ...calls[index]!, stepKey, nodeId, ...(passes.length ? { pass: passes.at(-1)!.pass } : {}) };
  const nodes = stepKey.endsWith(".obs") ? { ...view.nodes, [nodeId]: "completed" as const } : view.nodes;
  return { ...view, calls, nodes };
}

function requestOpened(view: RunView, event: BusEvent<"run.request_opened">): RunView {
  const { request } = event.payload;
  const requests = { ...view.requests, [request.requestId]: { request, segment: currentSegment(view) } };
  const requestOrder = view.requestOrder.includes(request.requestId) ? view.requestOrder : [...view.requestOrder, request.requestId];
  let next: RunView = { ...view, requests, requestOrder };
  if (request.stepKey) next = { ...next, nodes: { ...next.nodes, [nodeOfStepKey(request.stepKey).nodeId]: "waiting" } };
  let index = findLastIndex(next.calls, (c) => c.open && c.agentName === request.agentName && (!request.stepKey || c.stepKey === request.stepKey));
  if (index < 0) index = openCallIndex(next, request.agentName);
  const item: StreamItem = { kind: "request", requestId: request.requestId };
  if (index < 0) {
    const call: AgentCall = {
      key: String(event.id),
      agentName: request.agentName,
      segment: currentSegment(view),
      ...(request.stepKey ? { stepKey: request.stepKey, nodeId: nodeOfStepKey(request.stepKey).nodeId } : {}),
      items: [item],
      status: "waiting",
      startedAt: event.ts,
      open: true,
    };
    return { ...next, calls: [...next.calls, call] };
  }
  const calls = next.calls.slice();
  const call = calls[index]!;
  calls[index] = { ...call, status: "waiting", items: [...call.items, item] };
  return { ...next, calls };
}

function requestAnswered(view: RunView, event: BusEvent<"run.request_answered">): RunView {
  const p = event.payload;
  const entry = view.requests[p.requestId];
  if (!entry) return view;
  const answer = { text: p.answer, source: p.source, at: event.ts, ...(p.decision ? { decision: p.decision } : {}) };
  const requests = { ...view.requests, [p.requestId]: { ...entry, answer } };
  let next: RunView = { ...view, requests };
  const stepKey = entry.request.stepKey;
  if (stepKey) {
    const nodeId = nodeOfStepKey(stepKey).nodeId;
    const stillWaiting = Object.values(requests).some((r) => !r.answer && !r.closed && r.request.stepKey && nodeOfStepKey(r.request.stepKey).nodeId === nodeId);
    if (next.nodes[nodeId] === "waiting" && !stillWaiting) next = { ...next, nodes: { ...next.nodes, [nodeId]: "running" } };
  }
  const calls = next.calls.map((c) => (c.status === "waiting" && c.items.some((it) => it.kind === "request" && it.requestId === p.requestId) ? { ...c, status: "running" as const } : c));
  return { ...next, calls };
}

function steerApplied(view: RunView, event: BusEvent<"run.steer_applied">): RunView {
  const { agentName, text } = event.payload;
  const i = view.steers.findIndex((s) => s.appliedTo === undefined && s.text === text);
  const steers = i < 0 ? view.steers : view.steers.map((s, j) => (j === i ? { ...s, appliedTo: agentName } : s));
  const next = updateLastCall({ ...view, steers }, agentName, (c) => ({ ...c, items: [...c.items, { kind: "steer", text }] }));
  return next;
}

function segmentCompleted(view: RunView, event: BusEvent<"run.completed">): RunView {
  const p = event.payload;
  const segments = view.segments.map((s) =>
    s.segment === p.segment
      ? { ...s, status: p.status, endedAt: event.ts, ...(p.result !== undefined ? { result: p.result } : {}), ...(p.error ? { error: p.error } : {}), ...(p.usage ? { usage: p.usage } : {}) }
      : s,
  );
  const failed = p.status !== "completed";
  const endNode = (s: NodeStatus): NodeStatus => (s === "running" || s === "waiting" ? (failed ? "error" : "completed") : s);
  const nodes = Object.fromEntries(Object.entries(view.nodes).map(([id, s]) => [id, endNode(s)]));
  const callEnd: CallStatus = p.status === "completed" ? "completed" : p.status;
  const interrupted = (c: AgentCall) => c.status === "running" || c.status === "waiting";
  const calls = view.calls.map((c) =>
    c.open || interrupted(c) ? { ...c, open: false, status: interrupted(c) ? callEnd : c.status, ...(interrupted(c) && p.error ? { error: p.error.message } : {}) } : c,
  );
  const requests = Object.fromEntries(Object.entries(view.requests).map(([id, r]) => [id, r.answer || r.closed ? r : { ...r, closed: true }]));
  return { ...view, segments, nodes, calls, requests };
}
