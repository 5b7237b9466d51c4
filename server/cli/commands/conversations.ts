import type { Command } from ".";
import { clientFrom, connectionOptions, explain, parse } from "./common";

/**
 * Agents talking to each other (seed 004): `yard listen`, `yard ask`, `yard answer`. Inside an
 * agent, SWITCHYARD_URL / SWITCHYARD_TOKEN / SWITCHYARD_AGENT_ID are already set.
 */

export const listen: Command = {
  summary: "print the first pending question for an agent as JSON, then exit: yard listen --agent-id <id>",
  async run(args) {
    const { values } = parse(args, { ...connectionOptions, "agent-id": { type: "string" } });
    const agentId = values["agent-id"] ?? process.env.SWITCHYARD_AGENT_ID;
    if (!agentId) throw new Error("usage: yard listen --agent-id <id>");
    const { url, client } = clientFrom(values);
    return await new Promise<number>((resolve, reject) => {
      const sub = client.conversations.onPending.subscribe(
        { agentId },
        {
          onData: ({ data }) => {
            sub.unsubscribe();
            const out: Record<string, string> = { conversationId: data.id, fromAgentId: data.fromAgentId, question: data.question };
            if (data.phaseId) out.phaseId = data.phaseId;
            if (data.taskId) out.taskId = data.taskId;
            process.stdout.write(`${JSON.stringify(out)}\n`);
            resolve(0);
          },
          onError: (err) => reject(explain(err, url)),
        },
      );
    });
  },
};

export const ask: Command = {
  summary: "ask another agent (or --agent-id human) and print the answer: yard ask <question> --from <id> --agent-id|--task-id|--phase-id <target>",
  async run(args) {
    const { values, positionals } = parse(
      args,
      { ...connectionOptions, from: { type: "string" }, "agent-id": { type: "string" }, "task-id": { type: "string" }, "phase-id": { type: "string" }, timeout: { type: "string" }, "poll-interval": { type: "string" } },
      true,
    );
    const question = positionals.join(" ");
    const from = values.from ?? process.env.SWITCHYARD_AGENT_ID;
    if (!question || !from) throw new Error("usage: yard ask <question> --from <agentId> --agent-id|--task-id|--phase-id <target> [--timeout ms]");
    const { url, client } = clientFrom(values);
    const timeout = Number(values.timeout ?? 0);
    const pollMs = Number(values["poll-interval"] ?? 2000);
    try {
      const c = await client.conversations.ask.mutate({
        fromAgentId: from,
        question,
        ...(values["agent-id"] ? { toAgentId: values["agent-id"] } : {}),
        ...(values["task-id"] ? { taskId: values["task-id"] } : {}),
        ...(values["phase-id"] ? { phaseId: values["phase-id"] } : {}),
      });
      const deadline = timeout > 0 ? Date.now() + timeout : Infinity;
      for (;;) {
        const now = await client.conversations.get.query({ conversationId: c.id });
        if (now.status === "answered") {
          process.stdout.write(`${now.answer ?? ""}\n`);
          return 0;
        }
        if (Date.now() >= deadline) {
          process.stderr.write(`no answer within ${timeout} ms (conversation ${c.id} stays pending)\n`);
          return 2;
        }
        await new Promise((r) => setTimeout(r, Math.min(pollMs, Math.max(10, deadline - Date.now()))));
      }
    } catch (err) {
      throw explain(err, url);
    }
  },
};

export const answer: Command = {
  summary: "answer a question: yard answer <answer> --conversation-id <id>",
  async run(args) {
    const { values, positionals } = parse(args, { ...connectionOptions, "conversation-id": { type: "string" } }, true);
    const text = positionals.join(" ");
    const conversationId = values["conversation-id"];
    if (!text || !conversationId) throw new Error("usage: yard answer <answer> --conversation-id <id>");
    const { url, client } = clientFrom(values);
    try {
      await client.conversations.answer.mutate({ conversationId, answer: text });
      process.stdout.write(`${JSON.stringify({ conversationId, status: "answered" })}\n`);
      return 0;
    } catch (err) {
      throw explain(err, url);
    }
  },
};
