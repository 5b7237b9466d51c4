import { z } from "zod";
import { InboxItem } from "../../../shared/inbox";
import { clip, defineTool, preview } from "../tool-kit";

/** The inbox: everything waiting on a human, in one list. */

export const inbox = defineTool({
  name: "inbox",
  title: "The inbox",
  description:
    "Everything waiting on a human, oldest first: agents' questions (answer_agent), agents' tool approvals, agents interrupted by a lost worker (resume with message_agent, or stop_agent), questions to the human (answer_question), runs' input, question and permission requests (answer_run_request).",
  input: z.object({ limit: z.number().int().min(1).max(100).default(50) }),
  output: z.object({ total: z.number(), items: z.array(InboxItem) }),
  annotations: { readOnlyHint: true },
  async run(args, ctx) {
    const { items } = await ctx.yard.inbox.list.query();
    const shown = items.slice(0, args.limit).map((i) => (i.kind === "agent_approval" ? { ...i, input: preview(i.input) } : i.kind === "conversation" ? { ...i, question: clip(i.question, 2000) } : i));
    const kinds = new Map<string, number>();
    for (const i of items) kinds.set(i.kind, (kinds.get(i.kind) ?? 0) + 1);
    const counts = [...kinds].map(([k, n]) => `${n} ${k}`).join(", ");
    return { data: { total: items.length, items: shown }, text: items.length ? `${items.length} waiting on a human: ${counts}` : "Nothing waits on a human" };
  },
});
