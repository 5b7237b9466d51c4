import type { Command } from "commander";
import { examples, required, type Cli } from "./common";

/**
 * Agents talking to each other (seed 004): `yard listen`, `yard ask`, `yard answer`. Agents run
 * these inside their sessions and parse what they print (server/agents/prompts/communication.md):
 * listen prints one JSON line, ask the answer's text, answer one JSON line. Keep those exact.
 * Inside an agent, SWITCHYARD_URL / SWITCHYARD_TOKEN / SWITCHYARD_AGENT_ID are already set.
 */
export function registerConversations(program: Command, cli: Cli): void {
  registerAsk(program, cli);
  registerListen(program, cli);
  registerAnswer(program, cli);
}

type AskOptions = { from?: string; agentId?: string; taskId?: string; phaseId?: string; timeout: string; pollInterval: string; json?: boolean };

function registerAsk(program: Command, cli: Cli): void {
  const cmd = program
    .command("ask")
    .description("ask another agent (or --agent-id human) and print the answer when it comes")
    .argument("<question...>", "the question")
    .option("--from <agent>", "who asks (default: SWITCHYARD_AGENT_ID, set inside an agent)")
    .option("--agent-id <agent>", "ask this agent (id or alias), or human")
    .option("--task-id <task>", "ask the agent working on this task")
    .option("--phase-id <phase>", "ask the agent working on this phase")
    .option("--timeout <ms>", "stop waiting after this long (exit 2; the question stays pending); 0: wait for ever", "0")
    .option("--poll-interval <ms>", "how often to look for the answer", "2000")
    .option("--json", 'print {"conversationId","answer"} instead of the answer\'s text')
    .action(async (words: string[], opts: AskOptions, self: Command) => {
      const from = opts.from ?? cli.io.env.SWITCHYARD_AGENT_ID;
      if (!from) self.error("error: who asks? --from <agent> (or SWITCHYARD_AGENT_ID)");
      const client = await cli.client(self);
      const timeout = Number(opts.timeout);
      const pollMs = Number(opts.pollInterval);
      const c = await client.conversations.ask.mutate({
        fromAgentId: from,
        question: words.join(" "),
        ...(opts.agentId ? { toAgentId: opts.agentId } : {}),
        ...(opts.taskId ? { taskId: opts.taskId } : {}),
        ...(opts.phaseId ? { phaseId: opts.phaseId } : {}),
      });
      const deadline = timeout > 0 ? Date.now() + timeout : Infinity;
      for (;;) {
        const now = await client.conversations.get.query({ conversationId: c.id });
        if (now.status === "answered") {
          if (opts.json) cli.io.stdout.write(`${JSON.stringify({ conversationId: c.id, answer: now.answer ?? "" })}\n`);
          else cli.io.stdout.write(`${now.answer ?? ""}\n`);
          return;
        }
        if (Date.now() >= deadline) {
          cli.note(`no answer within ${timeout} ms (conversation ${c.id} stays pending)`);
          cli.exitCode = 2;
          return;
        }
        await new Promise((r) => setTimeout(r, Math.min(pollMs, Math.max(10, deadline - Date.now()))));
      }
    });
  examples(cmd, 'yard ask "Which port does the API use?" --task-id backend --timeout 600000', 'yard ask "Ship it today?" --agent-id human');
}

function registerListen(program: Command, cli: Cli): void {
  const cmd = program
    .command("listen")
    .description("wait for the first pending question to an agent, print it as one JSON line, exit")
    .option("--agent-id <agent>", "whose questions (default: SWITCHYARD_AGENT_ID, set inside an agent)")
    .option("--json", "the output is always JSON (accepted for uniformity)")
    .action(async (opts: { agentId?: string }, self: Command) => {
      const agentId = opts.agentId ?? cli.io.env.SWITCHYARD_AGENT_ID;
      if (!agentId) self.error("error: whose questions? --agent-id <agent> (or SWITCHYARD_AGENT_ID)");
      const client = await cli.client(self);
      await new Promise<void>((resolve, reject) => {
        const sub = client.conversations.onPending.subscribe(
          { agentId },
          {
            onData: ({ data }) => {
              sub.unsubscribe();
              const out: Record<string, string> = { conversationId: data.id, fromAgentId: data.fromAgentId, question: data.question };
              if (data.phaseId) out.phaseId = data.phaseId;
              if (data.taskId) out.taskId = data.taskId;
              cli.io.stdout.write(`${JSON.stringify(out)}\n`);
              resolve();
            },
            onError: (err) => reject(err),
          },
        );
      });
    });
  examples(cmd, 'yard listen --agent-id "$SWITCHYARD_AGENT_ID" > "$SWITCHYARD_LISTEN_FILE" &');
}

function registerAnswer(program: Command, cli: Cli): void {
  const cmd = program
    .command("answer")
    .description("answer a question (prints one JSON line)")
    .argument("<answer...>", "the answer")
    .addOption(required("--conversation-id <id>", "the question's conversationId (from yard listen)"))
    .option("--json", "the output is always JSON (accepted for uniformity)")
    .action(async (words: string[], opts: { conversationId: string }, self: Command) => {
      await (await cli.client(self)).conversations.answer.mutate({ conversationId: opts.conversationId, answer: words.join(" ") });
      cli.io.stdout.write(`${JSON.stringify({ conversationId: opts.conversationId, status: "answered" })}\n`);
    });
  examples(cmd, 'yard answer "port 8080" --conversation-id 0196c3f5-...');
}
