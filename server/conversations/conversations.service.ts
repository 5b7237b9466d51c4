import { and, desc, eq, or } from "drizzle-orm";
import { AskInput, HUMAN, type Conversation } from "../../shared/conversations";
import type { AgentsService } from "../agents/agents.service";
import { uuidv7 } from "../lib/uuidv7";
import { first, type Store } from "../db/store";
import { DomainError } from "../errors";
import type { EventBus } from "../events/bus";
import type { conversations } from "./conversations.sql";

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
    private readonly store: Store,
    private readonly bus: EventBus,
    private readonly agents: AgentsService,
  ) {}

  /** The agent a task or phase label points at: a running one first, then the newest. */
  private async resolveTarget(input: AskInput): Promise<string> {
    if (input.toAgentId === HUMAN) return HUMAN;
    if (input.toAgentId) return await this.agents.resolveId(input.toAgentId);
    const label = input.taskId ? { taskId: input.taskId } : { phaseId: input.phaseId! };
    const candidates = (await this.agents.list(label)).items.filter((a) => a.id !== input.fromAgentId);
    for (const status of LIVE_FIRST) {
      const hit = candidates.find((a) => a.status === status);
      if (hit) return hit.id;
    }
    const what = input.taskId ? `task "${input.taskId}"` : `phase "${input.phaseId}"`;
    throw new DomainError("CONVERSATION_TARGET_NOT_FOUND", `No agent works on ${what}`, { kind: "NOT_FOUND" });
  }

  /** An agent's id or alias (or "human") as stored: the canonical id; unknown ones as given (threads outlive agents). */
  async agentRef(idOrAlias: string): Promise<string> {
    return idOrAlias === HUMAN ? HUMAN : await this.agents.resolveId(idOrAlias, { lenient: true });
  }

  /** The question is stored with its conversation.created event, in one transaction. */
  async ask(raw: AskInput): Promise<Conversation> {
    const input = AskInput.parse(raw);
    const from = input.fromAgentId === HUMAN ? null : await this.agents.get(input.fromAgentId);
    const fromAgentId = from?.id ?? HUMAN;
    const toAgentId = await this.resolveTarget({ ...input, fromAgentId });
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
    const { conversations } = this.store.t;
    await this.bus.publish(
      "conversation.created",
      { fromAgentId: row.fromAgentId, toAgentId, question: row.question.slice(0, 4000) },
      { conversationId: row.id, agentId: toAgentId },
      {
        write: async (tx) => {
          await tx.insert(conversations).values(row);
        },
      },
    );
    return toConversation(row);
  }

  async get(id: string): Promise<Conversation> {
    const { conversations } = this.store.t;
    const row = await first(this.store.read.select().from(conversations).where(eq(conversations.id, id)));
    if (!row) throw notFound(id);
    return toConversation(row);
  }

  /** Pending questions addressed to an agent (id or alias, or "human"), oldest first. */
  async pending(toAgentId: string): Promise<Conversation[]> {
    const { conversations } = this.store.t;
    const to = await this.agentRef(toAgentId);
    const rows = await this.store.read
      .select()
      .from(conversations)
      .where(and(eq(conversations.toAgentId, to), eq(conversations.status, "pending")))
      .orderBy(conversations.createdAt);
    return rows.map(toConversation);
  }

  async list(filter: { agentId?: string; status?: "pending" | "answered" } = {}): Promise<Conversation[]> {
    const { conversations } = this.store.t;
    const agentId = filter.agentId ? await this.agentRef(filter.agentId) : undefined;
    const conds = [
      agentId ? or(eq(conversations.toAgentId, agentId), eq(conversations.fromAgentId, agentId)) : undefined,
      filter.status ? eq(conversations.status, filter.status) : undefined,
    ].filter((c) => c !== undefined);
    const rows = await this.store.read
      .select()
      .from(conversations)
      .where(conds.length ? and(...conds) : undefined)
      .orderBy(desc(conversations.createdAt))
      .limit(1000);
    return rows.map(toConversation);
  }

  /**
   * Answered exactly once: the answer is a compare-and-set on the pending row, stored with its
   * conversation.answered event; a second answer (here or on another server) is refused, and
   * leaves neither a row change nor an event.
   */
  async answer(id: string, answer: string): Promise<Conversation> {
    const c = await this.get(id);
    if (c.status === "answered") throw alreadyAnswered(id);
    const { conversations } = this.store.t;
    let answered: Row | undefined;
    await this.bus.publish(
      "conversation.answered",
      { fromAgentId: c.fromAgentId, toAgentId: c.toAgentId, answer: answer.slice(0, 4000) },
      { conversationId: id, agentId: c.fromAgentId },
      {
        write: async (tx) => {
          [answered] = await tx
            .update(conversations)
            .set({ answer, status: "answered", updatedAt: Date.now() })
            .where(and(eq(conversations.id, id), eq(conversations.status, "pending")))
            .returning();
          if (!answered) throw alreadyAnswered(id);
        },
      },
    );
    return toConversation(answered!);
  }
}

function notFound(id: string): DomainError<"CONVERSATION_NOT_FOUND"> {
  return new DomainError("CONVERSATION_NOT_FOUND", `No conversation "${id}"`, { kind: "NOT_FOUND" });
}

function alreadyAnswered(id: string): DomainError<"CONVERSATION_ANSWERED"> {
  return new DomainError("CONVERSATION_ANSWERED", `Conversation ${id} is already answered`, { kind: "CONFLICT" });
}
