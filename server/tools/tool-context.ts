import type { EventPayload } from "../../shared/events";
import type { PermissionOperation } from "../../shared/runs";
import type { CommandRules, PermissionPolicy } from "./policy";

/** What a built-in tool needs from the engine that runs it (one per agent call). */

export type PermissionRequest = {
  toolName: string;
  operation: PermissionOperation;
  /** An absolute path, or the command line for fs.exec. */
  resource: string;
  reason: "policy-ask";
  details?: Record<string, unknown>;
};

export type QuestionRequest = { toolName: string; question: string };

export type ToolCallNotice = { toolCallId: string; toolName: string; /** The input as a JSON string. */ args: string };

/** How a command ended: `run.command_ran` without the agent and step (the run adds them). */
export type CommandNotice = Omit<EventPayload<"run.command_ran">, "agentName" | "stepKey">;

export type MutationNotice = { toolName: string; operation: "fs.write"; /** Absolute path. */ path: string; details?: Record<string, unknown> };

export type ToolContext = {
  /** The run's working directory: relative paths are relative to it. */
  cwd: string;
  agentName: string;
  /** Aborts running tools (stop_run); commands are killed with their process group. */
  signal: AbortSignal;
  policy: PermissionPolicy;
  /** Asks a human (request_permission) and waits; "allow-session" is remembered by the engine via policy.remember. */
  requestPermission(request: PermissionRequest): Promise<"allow" | "deny">;
  /** Asks a human (request_question) and returns the answer. */
  askQuestion(request: QuestionRequest): Promise<string>;
  /** Called once per call, after any permission is settled and before the tool runs. */
  onToolCall?(call: ToolCallNotice): void;
  /** Called after a write tool changed the file system. */
  onMutation?(mutation: MutationNotice): void;
  /** Resolves once what the agent streamed before this tool call is out (the engine's stream reader reached it). */
  streamedUpTo?(toolCallId: string): Promise<void>;
  /** Called after run_command ran a command (so every command is on the run's timeline). */
  onCommand?(command: CommandNotice): void;
  /** How commands without a policy rule are decided (SWITCHYARD_RUN_COMMAND, the strategy's permissions). */
  commands?: CommandRules;
  /** True for a value that holds a secret the server knows (API keys, tokens, account credentials). */
  isSecret?(value: string): boolean;
};
