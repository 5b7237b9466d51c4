import type { EventPayload } from "../../shared/events";
import type { AgentCallDeps } from "./agent-call";
import type { DeltaBatcher } from "./delta-batcher";
import type { RunState } from "./run-state";

/** What the engine gives the built-in tools of one agent call. */
export type ToolHost = {
  cwd: string;
  policy: RunState["policy"];
  agentName: string;
  signal: AbortSignal;
  requestPermission(req: { toolName: string; operation: "fs.read" | "fs.write" | "fs.exec"; resource: string; reason: string; details?: unknown }): Promise<"allow" | "deny">;
  askQuestion(req: { toolName: string; question: string }): Promise<string>;
  onToolCall(call: { toolCallId: string; toolName: string; args: string }): void;
  /** How commands without a policy rule are decided: the server setting and the strategy's permissions. */
  commands: { askAll: boolean; askPatterns: string[] };
  onMutation(m: { toolName: string; operation: string; path: string; details?: unknown }): void;
  /** run_command ran a command: it goes on the run's timeline. */
  onCommand(c: CommandNotice): void;
  /** Resolves once the agent's stream has been read up to this tool call (what came before it is out first). */
  streamedUpTo(toolCallId: string): Promise<void>;
};

/** How long a tool waits for the stream reader to reach its call before going on regardless. */
const REACH_TIMEOUT_MS = 2_000;

/**
 * The AI SDK starts a tool as soon as the model's stream holds the whole call, which can be before
 * the reader of the stream has taken the text the model wrote before it. A tool waits here until
 * the reader reached its `tool-call` part, so that text is out before the call's request_permission
 * or tool-call event.
 */
export class StreamReached {
  private readonly waiting = new Map<string, () => void>();
  private readonly seen = new Set<string>();

  reach(toolCallId: string): void {
    this.seen.add(toolCallId);
    this.waiting.get(toolCallId)?.();
    this.waiting.delete(toolCallId);
  }

  upTo(toolCallId: string, signal: AbortSignal): Promise<void> {
    if (this.seen.has(toolCallId) || signal.aborted) return Promise.resolve();
    return new Promise((resolve) => {
      const done = () => {
        clearTimeout(timer);
        signal.removeEventListener("abort", done);
        this.waiting.delete(toolCallId);
        resolve();
      };
      const timer = setTimeout(done, REACH_TIMEOUT_MS);
      signal.addEventListener("abort", done, { once: true });
      this.waiting.set(toolCallId, done);
    });
  }
}

/** A command run_command ran, as `run.command_ran` records it (without the agent and step it belongs to). */
export type CommandNotice = Omit<EventPayload<"run.command_ran">, "agentName" | "stepKey">;

/** The server's SWITCHYARD_RUN_COMMAND and the strategy's `permissions.run_command`, together. */
export function commandRules(run: RunState, deps: Pick<AgentCallDeps, "runCommand">): ToolHost["commands"] {
  const own = run.config.strategy.permissions?.run_command;
  return { askAll: deps.runCommand === "ask" || own === "ask", askPatterns: typeof own === "object" ? [...own.ask] : [] };
}

/**
 * What the built-in tools of one agent call see of the run. The agent's streamed text is flushed
 * before anything else of the agent goes out (a request_permission follows the text streamed
 * before its tool call), and a session decision's policy_updated follows the call's tool-call
 * event, as the reference orders them.
 */
export function toolHost(run: RunState, agentName: string, stepKey: string, batcher: DeltaBatcher, reached: StreamReached, commands: ToolHost["commands"], onToolCall: ToolHost["onToolCall"]): ToolHost {
  const policyNotices: string[] = [];
  return {
    cwd: run.config.cwd,
    commands,
    streamedUpTo: (toolCallId) => reached.upTo(toolCallId, run.signal),
    policy: run.policy,
    agentName,
    signal: run.signal,
    onToolCall(call) {
      onToolCall(call);
      for (const tool of policyNotices.splice(0)) void run.emit("run.policy_updated", { tool, policies: run.policy.toJSON() }).catch(() => {});
    },
    async requestPermission(req) {
      batcher.flush();
      const answer = await run.ask(
        { kind: "permission", agentName, toolName: req.toolName, operation: req.operation, resource: req.resource, reason: req.reason, details: req.details, stepKey },
        { toolName: req.toolName, resource: req.resource },
      );
      if (answer.decision === "allow-session" || answer.decision === "deny-session") {
        run.policy.remember(req.toolName, req.operation, req.resource, answer.decision);
        policyNotices.push(req.toolName);
      }
      return answer.decision === "allow" || answer.decision === "allow-session" ? "allow" : "deny";
    },
    async askQuestion(req) {
      batcher.flush();
      const answer = await run.ask({ kind: "question", agentName, toolName: req.toolName, question: req.question, stepKey }, { toolName: req.toolName, question: req.question });
      return answer.text;
    },
    onMutation(m) {
      void run.emit("run.tool_mutated", { agentName, ...m }).catch(() => {});
    },
    onCommand(c) {
      void run.emit("run.command_ran", { agentName, stepKey, ...c }).catch(() => {});
    },
  };
}
