import { HUMAN } from "../../shared/conversations";
import type { InboxItem } from "../../shared/inbox";
import type { EventType } from "../../shared/events";
import type { AgentsService } from "../agents/agents.service";
import type { ConversationsService } from "../conversations/conversations.service";
import type { RunsService } from "../runs/runs.service";

/** Events after which the inbox may have changed. */
export const INBOX_EVENTS: ReadonlySet<EventType> = new Set<EventType>([
  "agent.questions_asked",
  "agent.resumed",
  "agent.went_idle",
  "agent.stopped",
  "agent.crashed",
  "agent.deleted",
  "agent.approval_requested",
  "agent.approval_decided",
  // an agent interrupted (its worker lost) comes in; resumed or stopped it leaves
  "agent.status_changed",
  "run.request_opened",
  "run.request_answered",
  "run.completed",
  "conversation.created",
  "conversation.answered",
]);

/** Interrupted agents listed at most (the newest): a whole lost worker's are a handful, not thousands. */
const INTERRUPTED_SHOWN = 200;

/** The inbox is a view over the agents' and runs' own state: nothing of it is stored twice. */
export async function inboxItems(agents: AgentsService, runs: RunsService, conversations: ConversationsService): Promise<InboxItem[]> {
  const items: InboxItem[] = [];
  const open = await runs.openRequests();
  // a CLI step's questions and approvals are its run's requests: listed once, as those
  const viaRun = new Set(open.map((r) => `${r.runId}|${r.request.agentName}`));
  const isRunStep = (a: { phaseId: string | null; taskId: string | null }) => !!a.phaseId && !!a.taskId && viaRun.has(`${a.phaseId}|${a.taskId}`);
  // the agents waiting for a human (questions, approvals), not every agent: the inbox is read on every page
  const needing = (await agents.list({ needsYou: true })).items;
  for (const a of needing.filter((x) => x.status === "waiting_for_input" && !isRunStep(x))) {
    items.push({ kind: "agent_question", id: `questions:${a.id}`, agentId: a.id, alias: a.alias, questions: a.pendingQuestions, createdAt: a.finishedAt ?? a.updatedAt });
  }
  const aliases = new Map(needing.map((a) => [a.id, a.alias]));
  const stepAgents = new Set(needing.filter(isRunStep).map((a) => a.id));
  for (const ap of await agents.approvals.list({ status: "pending" })) {
    if (stepAgents.has(ap.agentId)) continue;
    items.push({ kind: "agent_approval", id: ap.id, agentId: ap.agentId, alias: aliases.get(ap.agentId) ?? ap.agentId, toolName: ap.toolName, input: ap.input, createdAt: ap.createdAt });
  }
  for (const a of (await agents.list({ status: ["interrupted"] }, { limit: INTERRUPTED_SHOWN })).items) {
    items.push({ kind: "agent_interrupted", id: `interrupted:${a.id}`, agentId: a.id, alias: a.alias, reason: a.statusReason ?? "interrupted", worker: a.worker, createdAt: a.finishedAt ?? a.updatedAt });
  }
  const asking = await conversations.pending(HUMAN);
  const unnamed = [...new Set(asking.map((c) => c.fromAgentId).filter((id) => !aliases.has(id)))];
  if (unnamed.length > 0) for (const a of (await agents.list({ ids: unnamed })).items) aliases.set(a.id, a.alias);
  for (const c of asking) {
    items.push({ kind: "conversation", id: c.id, fromAgentId: c.fromAgentId, alias: aliases.get(c.fromAgentId) ?? c.fromAgentId, question: c.question, createdAt: c.createdAt });
  }
  for (const r of open) {
    items.push({ kind: "run_request", id: r.request.requestId, runId: r.runId, strategyName: r.strategyName, request: r.request, createdAt: r.request.createdAt });
  }
  return items.sort((a, b) => a.createdAt.localeCompare(b.createdAt));
}
