import { resolve } from "node:path";
import type { AgentInfo, AgentOutputLine, AgentQuestion, SpawnAgentInput } from "../../shared/agents";
import type { BusEvent } from "../../shared/events";
import type { AgentCallRecord, StreamEvent, Usage } from "../../shared/runs";
import type { CliAgent } from "../../shared/strategy";
import { getProvider } from "../agents/providers";
import type { ToolPermission } from "../agents/providers/types";
import { DomainError } from "../errors";
import type { EventBus } from "../events/bus";
import { DeltaBatcher } from "./delta-batcher";
import type { StepOutput } from "./flow-executor";
import { RunCancelledError, type RunState } from "./run-state";

/**
 * A `type: cli` step: a coding-agent CLI (claude, codex, fake...) spawned in its own worktree
 * with the step's input as its task (labels phaseId = runId, taskId = step name). Its normalized
 * output is forwarded as the run's `agent_streaming` events; its questions become
 * `request_question`s and its tool approvals `request_permission`s; stop_run stops it. The step
 * ends with the agent's result and a summary of its changes (branch, files, +/-, a capped diff).
 */

/** What a CLI step needs from the agents service. */
export interface CliAgentsPort {
  spawn(input: SpawnAgentInput): Promise<AgentInfo>;
  get(idOrAlias: string): Promise<AgentInfo>;
  settled(idOrAlias: string): Promise<AgentInfo>;
  resume(idOrAlias: string, answers: Record<string, string>): Promise<AgentInfo>;
  message(idOrAlias: string, text: string): Promise<{ delivered: "now" | "queued"; agent: AgentInfo }>;
  stop(idOrAlias: string): Promise<AgentInfo>;
  summary(
    idOrAlias: string,
    maxBytes: number,
  ): Promise<{ files: Array<{ path: string; status: string; insertions: number; deletions: number }>; insertions: number; deletions: number; commitsAhead: number; dirty: boolean; patch: string; truncated: boolean }>;
  chunkOutput(agentId: string, chunkId: number): Promise<AgentOutputLine[]>;
  /** The agent's usage plus that of every agent it spawned (and theirs). */
  treeUsage(idOrAlias: string): Promise<AgentInfo["usage"]>;
  approvals: { decide(approvalId: string, decision: { allow: boolean; message?: string }): Promise<unknown> };
}

export type CliStepDeps = { agents: CliAgentsPort; bus: EventBus };

/** How much of the diff the next step gets. */
const DIFF_BYTES = 16 * 1024;

/** A CLI agent's tool call in the run's permission terms: its provider's adapter knows its tools. */
function permissionOf(provider: string, toolName: string, input: unknown): ToolPermission {
  return getProvider(provider).permissionOf(toolName, input);
}

/** The text the next step gets: the agent's result, then what changed on its branch. */
export async function changeSummary(agents: CliAgentsPort, agent: AgentInfo): Promise<string> {
  try {
    return await describeChanges(agents, agent);
  } catch (err) {
    return `Changes: unavailable (${(err as Error).message}).`;
  }
}

/**
 * What changed on the agent's branch; rejects when that cannot be read. A worktree removed by
 * cleanup, even while it is being read, is read from its kept branch (see `readWorktree`).
 */
async function describeChanges(agents: CliAgentsPort, agent: AgentInfo): Promise<string> {
  if (agent.workspaceKind !== "worktree") return "Changes: none tracked (the repository is not a git repository).";
  const changes = await agents.summary(agent.id, DIFF_BYTES);
  if (changes.files.length === 0) return `Changes: none (branch ${agent.branch ?? "?"} has no changes).`;
  const files = changes.files.slice(0, 100).map((f) => `- ${f.path} (${f.status}, +${f.insertions} -${f.deletions})`);
  if (changes.files.length > 100) files.push(`- … ${changes.files.length - 100} more`);
  const { patch, truncated } = changes;
  return [
    `Changes on branch ${agent.branch ?? "?"}: ${changes.files.length} file(s), +${changes.insertions} -${changes.deletions}, ${changes.commitsAhead} commit(s)${changes.dirty ? ", some not committed" : ""}`,
    ...files,
    ...(patch ? ["", "```diff", patch.trimEnd(), "```", ...(truncated ? [`(diff cut at ${DIFF_BYTES / 1024} KB)`] : [])] : []),
  ].join("\n");
}

async function findAgent(agents: CliAgentsPort, id: string): Promise<AgentInfo | null> {
  try {
    return await agents.get(id);
  } catch {
    return null;
  }
}

export function renderCliPrompt(agent: CliAgent, input: string): string {
  if (!agent.promptTemplate) return input;
  return agent.promptTemplate.replace(/\{\{\s*input\s*\}\}/g, input);
}

export async function callCli(run: RunState, deps: CliStepDeps | undefined, agentName: string, agent: CliAgent, input: string, stepKey: string, userMessage: string): Promise<StepOutput & { costUsd?: number; tokens: number }> {
  if (!deps) throw new DomainError("EXECUTION_ERROR", `Agent "${agentName}" is a CLI agent, and this server runs no CLI agents`);
  const { agents, bus } = deps;
  const prompt = renderCliPrompt(agent, userMessage);
  const meta = { agentName, model: `cli/${agent.provider}`, stepKey, requestId: run.requestId };
  const signal = run.signal;
  const batcher = new DeltaBatcher((event) => {
    if (!signal.aborted) void run.emit("run.agent_streamed", { ...meta, event }).catch(() => {});
  });
  const stream = (event: StreamEvent) => batcher.event(event);

  // continue_run (or a later cycle pass) goes on with the same agent session in the same worktree
  const previous = (run.history.get(agentName) ?? []).findLast((r) => r.cliAgentId);
  const before = previous?.cliAgentId ? await findAgent(agents, previous.cliAgentId) : null;
  const reuse = before && !["starting", "running", "waiting_for_input", "waiting_for_account"].includes(before.status) && before.sessionId ? before : null;
  const afterId = bus.lastId;
  let info: AgentInfo;
  // after a server restart mid-step: the agent this step started runs on detached; follow it again
  const started = run.memo.cliAgents.get(stepKey);
  const reattached = started ? await findAgent(agents, started) : null;
  if (reattached) {
    info = reattached;
  } else if (reuse) {
    info = (await agents.message(reuse.id, prompt)).agent;
  } else {
    info = await agents.spawn({
      provider: agent.provider,
      prompt,
      repo: resolve(run.config.cwd, agent.repo ?? "."),
      ...(agent.baseRef ? { baseRef: agent.baseRef } : {}),
      ...(agent.mode ? { mode: agent.mode as SpawnAgentInput["mode"] } : {}),
      ...(agent.permissionMode ? { permissionMode: agent.permissionMode } : {}),
      ...(agent.account ? { account: agent.account } : {}),
      phaseId: run.runId,
      taskId: agentName,
    });
  }
  // the step's spend is its agent's and that of the helpers it spawned (its tree)
  const usageBefore = reuse && !reattached ? await agents.treeUsage(info.id) : { inputTokens: 0, outputTokens: 0 };
  await run.emit("run.cli_agent_started", { agentName, stepKey, agentId: info.id, alias: info.alias, provider: info.provider, branch: info.branch, status: info.status, requestId: run.requestId });

  // stop_run stops the agent; a server shutdown does not (it runs on, and the step re-attaches)
  const stopAgent = () => {
    if (!run.serverStopping) void agents.stop(info.id).catch(() => {});
  };
  signal.addEventListener("abort", stopAgent, { once: true });
  const watch = new AbortController();
  const cancelWatch = () => watch.abort();
  signal.addEventListener("abort", cancelWatch, { once: true });
  const answering = new Set<string>();
  /** Output events seen, and a hand-over summary begun at the CLI's result line (see below). */
  let outputs = 0;
  const speculative: { early: { afterOutputs: number; text: Promise<string> } | null } = { early: null };
  /** Open request_permission of this step per approval, so a decision made elsewhere closes it. */
  const approvalRequests = new Map<string, () => void>();
  /** A failure while answering for the agent ends the step with it. */
  let failure: unknown;
  const fail = (err: unknown) => {
    if (err instanceof RunCancelledError || signal.aborted) return;
    failure ??= err;
    watch.abort();
  };
  try {
    stream({ type: "step-start" });
    let final: AgentInfo | null = null;
    if (reattached) {
      // what happened while the server was down: finished, or waiting for answers
      const now = await agents.get(info.id);
      if (now.status === "idle") final = await agents.settled(info.id);
      else if (now.status === "waiting_for_input") void answerQuestions(now.pendingQuestions);
      else if (now.status === "crashed" || now.status === "stopped") throw new DomainError("EXECUTION_ERROR", `CLI agent ${now.alias} of step "${agentName}" ${now.status} while the server was down: ${now.statusReason ?? ""}`);
    }
    if (!final) outer: for await (const batch of bus.subscribeBatches({ afterId, scope: { kind: "agent", id: info.id }, signal: watch.signal })) {
      for (const e of batch) {
        const outcome = await handle(e);
        if (outcome) {
          final = outcome;
          break outer;
        }
      }
    }
    batcher.flush();
    if (failure) throw failure;
    if (signal.aborted || !final) throw new RunCancelledError();
    // the summary started when the CLI printed its result is good if nothing came after it (and it
    // could be read; else it is read again now)
    const early = speculative.early;
    const summary = (early && early.afterOutputs === outputs ? await early.text.catch(() => null) : null) ?? (await changeSummary(agents, final));
    const result = final.result?.trim() || "(the agent finished without a result message)";
    const text = `${result}\n\n${summary}`;
    const spent = await agents.treeUsage(final.id);
    const usage: Usage = {
      promptTokens: Math.max(0, spent.inputTokens - usageBefore.inputTokens),
      completionTokens: Math.max(0, spent.outputTokens - usageBefore.outputTokens),
    };
    const costUsd = spent.costUsd !== undefined ? Math.max(0, spent.costUsd - (usageBefore.costUsd ?? 0)) : undefined;
    run.addUsage(usage);
    await run.emit("run.agent_responded", { ...meta, text, usage });
    stream({ type: "done", result: { text, usage, finishReason: "stop" } });
    batcher.flush();
    const record: AgentCallRecord = {
      id: `${info.id}:${final.sessionNumber}`,
      agentName,
      createdAt: new Date().toISOString(),
      userMessage,
      responseMessages: [],
      text,
      usage,
      finishReason: "stop",
      stepKey,
      cliAgentId: info.id,
    };
    await run.emit("run.agent_called", { record });
    run.recordCall(record);
    return { text, usage, finishReason: "stop", tokens: usage.promptTokens + usage.completionTokens, ...(costUsd !== undefined ? { costUsd } : {}) };
  } finally {
    signal.removeEventListener("abort", stopAgent);
    signal.removeEventListener("abort", cancelWatch);
    watch.abort();
  }

  /** One agent event: forwards output, answers requests; returns the agent once its step is over. */
  async function handle(e: BusEvent): Promise<AgentInfo | null> {
    switch (e.type) {
      case "agent.output_produced": {
        outputs++;
        let resultSeen = false;
        for (const line of await agents.chunkOutput(info.id, e.payload.chunkId)) resultSeen = forward(line) || resultSeen;
        // the CLI is done with its files: start the hand-over summary while its process winds down
        if (resultSeen) {
          const text = agents.get(info.id).then((agent) => describeChanges(agents, agent));
          text.catch(() => undefined);
          speculative.early = { afterOutputs: outputs, text };
        }
        return null;
      }
      case "agent.questions_asked":
        void answerQuestions(e.payload.questions);
        return null;
      case "agent.resumed":
        // the agent went on (answered on its own page): its questions are no longer the run's to ask
        for (const r of run.pendingRequests()) {
          if (r.kind === "question" && r.stepKey === stepKey && r.agentName === agentName) run.answer(r.requestId, { text: "(answered on the agent's page)", source: "human" });
        }
        return null;
      case "agent.approval_requested":
        void answerApproval(e.payload.approvalId, e.payload.toolName, e.payload.input);
        return null;
      case "agent.approval_decided":
        // decided on the agent's page (or expired): the run's request for it is closed too
        approvalRequests.get(e.payload.approvalId)?.();
        return null;
      case "agent.went_idle": {
        // cleanup may resume it once to commit its work: the step waits for that run too
        const settled = await agents.settled(info.id);
        return settled.status === "idle" ? settled : null;
      }
      case "agent.crashed":
        throw new DomainError("EXECUTION_ERROR", `CLI agent ${info.alias} (${agent.provider}) of step "${agentName}" crashed: ${e.payload.reason}`);
      case "agent.stopped":
        if (signal.aborted) throw new RunCancelledError();
        throw new DomainError("EXECUTION_ERROR", `CLI agent ${info.alias} of step "${agentName}" was stopped: ${e.payload.reason ?? "by a user"}`);
      case "agent.deleted":
        throw new DomainError("EXECUTION_ERROR", `CLI agent ${info.alias} of step "${agentName}" was deleted`);
      default:
        return null;
    }
  }

  /** Forwards a line's events; true when the line holds the CLI's result. */
  function forward(line: AgentOutputLine): boolean {
    let result = false;
    for (const ev of line.events) {
      switch (ev.kind) {
        case "text":
          if (ev.text) batcher.text(ev.text.endsWith("\n") ? ev.text : `${ev.text}\n`);
          break;
        case "thinking": {
          const id = `${info.id}:${line.line}`;
          stream({ type: "thinking-start", id });
          batcher.thinking(id, ev.text);
          stream({ type: "thinking-end", id });
          break;
        }
        case "tool_call":
          stream({ type: "tool-call", toolCallId: ev.id, toolName: ev.name, args: JSON.stringify(ev.input ?? {}) });
          break;
        case "tool_result":
          stream({ type: "tool-result", toolCallId: ev.id, toolName: ev.name ?? "tool", output: ev.output, status: ev.isError ? "error" : "completed", ...(ev.isError ? { error: ev.output.slice(0, 2000) } : {}) });
          break;
        case "result":
          result = true;
          break;
        default:
          break;
      }
    }
    return result;
  }

  /** One request_question per question; the agent resumes once all are answered. */
  async function answerQuestions(questions: AgentQuestion[]): Promise<void> {
    const key = questions.map((q) => q.id).join("|");
    if (answering.has(key)) return;
    answering.add(key);
    try {
      const answers = await Promise.all(
        questions.map(async (q) => [q.id, (await run.ask({ kind: "question", agentName, toolName: `${agent.provider}:question`, question: q.question, stepKey }, { toolName: `${agent.provider}:question`, question: q.question })).text] as const),
      );
      // answered on the agent's own page meanwhile: nothing more to send
      if ((await agents.get(info.id)).status === "waiting_for_input") await agents.resume(info.id, Object.fromEntries(answers));
    } catch (err) {
      fail(err);
    } finally {
      answering.delete(key);
    }
  }

  async function answerApproval(approvalId: string, toolName: string, toolInput: unknown): Promise<void> {
    const { operation, resource } = permissionOf(info.provider, toolName, toolInput);
    const before = new Set(run.pendingRequests().map((r) => r.requestId));
    approvalRequests.set(approvalId, () => {
      const mine = run.pendingRequests().find((r) => r.kind === "permission" && r.stepKey === stepKey && !before.has(r.requestId) && r.toolName === toolName && r.resource === resource);
      if (mine) run.answer(mine.requestId, { text: "(decided on the agent's page)", decision: "deny", source: "human" });
    });
    try {
      const answer = await run.ask(
        { kind: "permission", agentName, toolName, operation, resource, reason: `CLI agent ${info.alias} (${agent.provider}) wants to use ${toolName}`, details: toolInput, stepKey },
        { toolName, resource },
      );
      const allow = answer.decision === "allow" || answer.decision === "allow-session";
      await agents.approvals.decide(approvalId, allow ? { allow: true } : { allow: false, message: "denied in the strategy run" }).catch((err: unknown) => {
        // decided elsewhere first: nothing to do
        if ((err as { code?: string }).code !== "APPROVAL_NOT_PENDING") throw err;
      });
    } catch (err) {
      fail(err);
    } finally {
      approvalRequests.delete(approvalId);
    }
  }
}
