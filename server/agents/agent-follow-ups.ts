import { uuidv7 } from "../lib/uuidv7";
import { DomainError } from "../errors";
import type { AgentContext } from "./agent-context";
import { AgentNotLive } from "./agent-messages";
import type { AgentOutput } from "./agent-output";
import { LIVE_STATUSES } from "./agent-records";
import type { AgentRunner } from "./agent-runner";
import type { AgentWorkspaces } from "./agent-workspaces";
import { formatAnswersAsPrompt } from "./prompts";

/** What a human (or another agent) says to an agent after its start: answers, and follow-ups. */
export class AgentFollowUps {
  constructor(
    private readonly ctx: AgentContext,
    private readonly output: AgentOutput,
    private readonly runner: AgentRunner,
    private readonly workspaces: AgentWorkspaces,
  ) {}

  /** Answer the agent's pending questions: it resumes on the same session in the same worktree. Returns its id. */
  async answer(id: string, answers: Record<string, string>): Promise<string> {
    await this.workspaces.landed(id);
    const row = await this.ctx.records.get(id);
    if (row.status === "interrupted") {
      // its host was lost: it goes on (elsewhere when its worker is gone, in a new session with the work so far)
      const prompt = Object.values(answers).join("\n\n").trim() || "Continue the task: the earlier session was interrupted before it finished.";
      await this.output.note(row.id, row.sessionNumber, "user_message", prompt);
      await this.runner.resumeWith(row, prompt, "message", { resume: this.ctx.hosts.reachable(row) && row.sessionId !== null });
      return row.id;
    }
    if (row.status !== "waiting_for_input") {
      throw new DomainError("AGENT_NOT_WAITING", `Agent ${row.alias} is ${row.status}, not waiting for answers`, { kind: "CONFLICT" });
    }
    const missing = row.pendingQuestions.filter((q) => !answers[q.id]?.trim()).map((q) => q.id);
    if (missing.length > 0) throw new DomainError("ANSWERS_MISSING", `Answer every question: missing ${missing.join(", ")}`, { details: { missing } });
    this.runner.assertResumable(row);
    const prompt = formatAnswersAsPrompt(row.pendingQuestions, answers);
    await this.output.note(row.id, row.sessionNumber, "user_message", prompt);
    await this.runner.resumeWith(row, prompt, "answers");
    return row.id;
  }

  /**
   * A follow-up: for a live agent it becomes a row (delivered in order at its next idle point,
   * never lost: the agent goes idle only in a transaction that finds none waiting); otherwise it
   * resumes the agent now. A move of the agent in between (it went idle, another run started) is
   * met by trying again on what the agent is then.
   */
  async message(id: string, text: string): Promise<"now" | "queued"> {
    for (let attempt = 1; ; attempt++) {
      try {
        return await this.messageOnce(id, text);
      } catch (err) {
        const moved = err instanceof AgentNotLive || (err instanceof DomainError && err.code === "AGENT_VERSION_CONFLICT");
        if (!moved || attempt >= 5) throw err;
      }
    }
  }

  private async messageOnce(id: string, text: string): Promise<"now" | "queued"> {
    let row = await this.ctx.records.get(id);
    if (!LIVE_STATUSES.includes(row.status)) {
      // a resume meets the worktree as the cleanup at idle leaves it, never half removed
      await this.workspaces.landed(id);
      row = await this.ctx.records.get(id);
    }
    if (LIVE_STATUSES.includes(row.status)) {
      const messageId = `msg_${uuidv7()}`;
      const queued = (await this.ctx.messages.undelivered(row.id)).length + 1;
      await this.ctx.publish(row.id, "agent.message_queued", { messageId, text: text.slice(0, 2000), queued }, async (tx) => void (await this.ctx.messages.enqueueIfLive(tx, row.id, text, messageId)));
      return "queued";
    }
    if (row.status === "waiting_for_account") throw new DomainError("AGENT_WAITING_FOR_ACCOUNT", `Agent ${row.alias} waits for an account`, { kind: "CONFLICT" });
    this.runner.assertResumable(row);
    await this.output.note(row.id, row.sessionNumber, "user_message", text);
    await this.runner.resumeWith(row, text, "message");
    return "now";
  }
}
