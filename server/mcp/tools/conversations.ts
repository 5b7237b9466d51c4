import { z } from "zod";
import { HUMAN, type Conversation } from "../../../shared/conversations";
import { ConversationStatus } from "../../../shared/statuses";
import { clip, defineTool, ToolFailure } from "../tool-kit";
import { timeoutSeconds, waitUntil } from "../waiting";
import { ID, MESSAGE } from "./limits";

/** Questions between agents, and to the human: ask (and wait), see what is asked of you, answer. */

const QuestionView = z.object({
  conversationId: z.string(),
  fromAgentId: z.string(),
  toAgentId: z.string(),
  question: z.string(),
  taskId: z.string().nullable(),
  phaseId: z.string().nullable(),
  createdAt: z.string(),
});

const questionView = (c: Conversation): z.infer<typeof QuestionView> => ({
  conversationId: c.id,
  fromAgentId: c.fromAgentId,
  toAgentId: c.toAgentId,
  question: clip(c.question, 8000),
  taskId: c.taskId,
  phaseId: c.phaseId,
  createdAt: c.createdAt,
});

export const ask = defineTool({
  name: "ask",
  title: "Ask an agent or the human",
  description:
    'Ask a question and wait for the answer (at most timeoutSeconds; then status "pending": call ask again with the conversationId to keep waiting). Give exactly one target: toAgentId (an agent id or alias, or "human"), taskId or phaseId (the agent working on it).',
  input: z.object({
    question: MESSAGE.optional().describe("The question (omit when you give conversationId to keep waiting)"),
    toAgentId: ID.optional().describe('An agent id or alias, or "human"'),
    taskId: ID.optional().describe("Ask the agent working on this task"),
    phaseId: ID.optional().describe("Ask the agent working on this phase"),
    fromAgentId: ID.optional().describe('Who asks (default: the agent this server speaks for, else "human")'),
    conversationId: ID.optional().describe("Keep waiting for the answer to a question asked before"),
    wait: z.boolean().default(true).describe("Wait for the answer (false: return at once with status pending)"),
    timeoutSeconds: timeoutSeconds(50),
  }),
  output: z.object({
    status: ConversationStatus.describe('"answered", or "pending": not answered yet (call ask with conversationId to keep waiting)'),
    conversationId: z.string(),
    toAgentId: z.string(),
    question: z.string(),
    answer: z.string().nullable(),
    waitedMs: z.number(),
  }),
  async run(args, ctx, extra) {
    const targets = [args.toAgentId, args.taskId, args.phaseId].filter((t) => t !== undefined).length;
    let asked: Conversation;
    if (args.conversationId !== undefined) {
      if (args.question !== undefined || targets > 0) throw new ToolFailure("BAD_INPUT", "give either conversationId (to keep waiting) or a question with its target, not both");
      asked = await ctx.yard.conversations.get.query({ conversationId: args.conversationId });
    } else {
      if (args.question === undefined) throw new ToolFailure("BAD_INPUT", "question: required (or conversationId to keep waiting for an earlier one)");
      if (targets !== 1) throw new ToolFailure("BAD_INPUT", 'give exactly one of toAgentId (an agent id or "human"), taskId, phaseId');
      asked = await ctx.yard.conversations.ask.mutate({
        fromAgentId: args.fromAgentId ?? ctx.agentId ?? HUMAN,
        question: args.question,
        ...(args.toAgentId !== undefined ? { toAgentId: args.toAgentId } : {}),
        ...(args.taskId !== undefined ? { taskId: args.taskId } : {}),
        ...(args.phaseId !== undefined ? { phaseId: args.phaseId } : {}),
      });
    }
    const waited = await waitUntil(() => ctx.yard.conversations.get.query({ conversationId: asked.id }), (c) => c.status === "answered", {
      timeoutMs: args.wait ? args.timeoutSeconds * 1000 : 0,
      extra,
      what: `the answer to ${asked.id}`,
    });
    const c = waited.value;
    const data = { status: c.status, conversationId: c.id, toAgentId: c.toAgentId, question: clip(c.question, 2000), answer: c.answer === null ? null : clip(c.answer, 16_000), waitedMs: waited.waitedMs };
    const text = c.status === "answered" ? `${c.toAgentId} answered: ${clip(c.answer ?? "", 500)}` : `No answer from ${c.toAgentId} yet (${c.id}): call ask with this conversationId to keep waiting`;
    return { data, text };
  },
});

export const pendingQuestions = defineTool({
  name: "pending_questions",
  title: "Questions waiting for an answer",
  description: 'The unanswered questions asked of an agent (default: the agent this server speaks for, else "human"), oldest first. Answer each with answer_question.',
  input: z.object({ agentId: ID.optional().describe('An agent id or alias, or "human"') }),
  output: z.object({ agentId: z.string(), total: z.number(), questions: z.array(QuestionView).describe("At most 50") }),
  annotations: { readOnlyHint: true },
  async run(args, ctx) {
    const agentId = args.agentId ?? ctx.agentId ?? HUMAN;
    const pending = await ctx.yard.conversations.pending.query({ agentId });
    return { data: { agentId, total: pending.length, questions: pending.slice(0, 50).map(questionView) }, text: `${pending.length} questions waiting for ${agentId}` };
  },
});

export const answerQuestion = defineTool({
  name: "answer_question",
  title: "Answer a question",
  description: "Answer a question asked with ask (pending_questions lists them); the asker's ask returns this answer.",
  input: z.object({ conversationId: ID, answer: MESSAGE }),
  output: z.object({ conversationId: z.string(), status: ConversationStatus, fromAgentId: z.string() }),
  async run(args, ctx) {
    const c = await ctx.yard.conversations.answer.mutate({ conversationId: args.conversationId, answer: args.answer });
    return { data: { conversationId: c.id, status: c.status, fromAgentId: c.fromAgentId }, text: `Answered ${c.id} (asked by ${c.fromAgentId})` };
  },
});

export const CONVERSATION_TOOLS = [ask, pendingQuestions, answerQuestion];
