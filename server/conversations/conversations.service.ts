import { and, desc, eq, or } from "drizzle-orm";
import { AskInput, HUMAN, type Conversation } from "../../shared/conversations";
import type { AgentsService } from "../agents/agents.service";
import { uuidv7 } from "../daemons/uuidv7";
import type { Db } from "../db/client";
import { DomainError } from "../errors";
import type { EventBus } from "../events/bus";
import { conversations } from "./conversations.sql";

type Row = typeof conversations.$inferSelect;

function toConversation(r: Row): Conversation {
  return {
    id: r.id,
    fromAgentId: r.fromAgentId,
    toAgentId: r.toAgentId,
    initiativeId: r.initiativeId,
    phaseId: r.phaseId,
    taskId: r.taskId,
    question: r.question,
    answer: r.answer,
    status: r.status,
    createdAt: new Date(r.createdAt).toISOString(),
    updatedAt: new Date(r.updatedAt).toISOString(),
  };
}

const LIVE_FIRST = ["running", "starting", "waiting_for_input", "idle"] as const;

/** Agents asking each other (or a human) questions; answers arrive asynchronously. */
export class ConversationsService {
  constructor(
    private readonly db: Db,
    private readonly bus: EventBus,
    private readonly agents: AgentsService,
  ) {}

  /** The agent a task or phase label points at: a running one first, then the newest. */
  private resolveTarget(input: AskInput): string {
    if (input.toAgentId === HUMAN) return HUMAN;
    if (input.toAgentId) return this.agents.resolveId(input.toAgentId);
    const label = input.taskId ? { taskId: input.taskId } : { phaseId: input.phaseId! };
    const candidates = this.agents.list(label).filter((a) => a.id !== input.fromAgentId);
    for (const status of LIVE_FIRST) {
      const hit = candidates.find((a) => a.status === status);
      if (hit) return hit.id;
    }
    const what = input.taskId ? `task "${input.taskId}"` : `phase "${input.phaseId}"`;
    throw new DomainError("CONVERSATION_TARGET_NOT_FOUND", `No agent works on ${what}`, { kind: "NOT_FOUND" });
  }

  /** An agent's id or alias (or "human") as stored: the canonical id; unknown ones as given (threads outlive agents). */
  agentRef(idOrAlias: string): string {
    return idOrAlias === HUMAN ? HUMAN : this.agents.resolveId(idOrAlias, { lenient: true });
  }

  async ask(raw: AskInput): Promise<Conversation> {
    const input = AskInput.parse(raw);
    const from = input.fromAgentId === HUMAN ? null : this.agents.get(input.fromAgentId);
    const fromAgentId = from?.id ?? HUMAN;
    const toAgentId = this.resolveTarget({ ...input, fromAgentId });
    if (toAgentId === fromAgentId) throw new DomainError("CONVERSATION_SELF", "An agent cannot ask itself");
    const now = Date.now();
    const row: Row = {
      id: `conv_${uuidv7()}`,
      fromAgentId,
      toAgentId,
      initiativeId: from?.initiativeId ?? null,
      phaseId: input.phaseId ?? from?.phaseId ?? null,
      taskId: input.taskId ?? from?.taskId ?? null,
      question: input.question,
      answer: null,
      status: "pending",
      createdAt: now,
      updatedAt: now,
    };
    this.db.insert(conversations).values(row).run();
    await this.bus.publish("conversation.created", { fromAgentId: row.fromAgentId, toAgentId, question: row.question.slice(0, 4000) }, { conversationId: row.id, agentId: toAgentId });
    return toConversation(row);
  }

  get(id: string): Conversation {
    const row = this.db.select().from(conversations).where(eq(conversations.id, id)).get();
    if (!row) throw new DomainError("CONVERSATION_NOT_FOUND", `No conversation "${id}"`, { kind: "NOT_FOUND" });
    return toConversation(row);
  }

  /** Pending questions addressed to an agent (id or alias, or "human"), oldest first. */
  pending(toAgentId: string): Conversation[] {
    return this.db
      .select()
      .from(conversations)
      .where(and(eq(conversations.toAgentId, this.agentRef(toAgentId)), eq(conversations.status, "pending")))
      .orderBy(conversations.createdAt)
      .all()
      .map(toConversation);
  }

  list(filter: { agentId?: string; status?: "pending" | "answered" } = {}): Conversation[] {
    const agentId = filter.agentId ? this.agentRef(filter.agentId) : undefined;
    const conds = [
      agentId ? or(eq(conversations.toAgentId, agentId), eq(conversations.fromAgentId, agentId)) : undefined,
      filter.status ? eq(conversations.status, filter.status) : undefined,
    ].filter((c) => c !== undefined);
    return this.db
      .select()
      .from(conversations)
      .where(conds.length ? and(...conds) : undefined)
      .orderBy(desc(conversations.createdAt))
      .limit(1000)
      .all()
      .map(toConversation);
  }

  async answer(id: string, answer: string): Promise<Conversation> {
    const c = this.get(id);
    if (c.status === "answered") throw new DomainError("CONVERSATION_ANSWERED", `Conversation ${id} is already answered`, { kind: "CONFLICT" });
    this.db.update(conversations).set({ answer, status: "answered", updatedAt: Date.now() }).where(eq(conversations.id, id)).run();
    await this.bus.publish("conversation.answered", { fromAgentId: c.fromAgentId, toAgentId: c.toAgentId, answer: answer.slice(0, 4000) }, { conversationId: id, agentId: c.fromAgentId });
    return this.get(id);
  }
}
