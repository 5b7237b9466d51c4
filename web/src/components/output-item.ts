/**
 * What an agent produced, as the dashboard shows it: the one display model behind both the run
 * page (a strategy call's `StreamEvent`s folded by runs/stream-items.ts) and the CLI agent log
 * (each parsed `AgentStreamEvent` mapped by agents/EventView.tsx). One renderer draws it:
 * OutputItemView.tsx. Why the two wire types stay two: docs/ARCHITECTURE.md "Agent output".
 */

/** A tool call; `result` once it came back. `resultApart`: its result is an item of its own (the agent log), so no status here. */
export type ToolItem = {
  kind: "tool";
  toolCallId: string;
  toolName: string;
  args: string;
  result?: { output: string; status: "completed" | "error"; error?: string };
  resultApart?: true;
};

/** A tool result shown on its own (a CLI agent's log line), its call on an earlier line. */
export type ToolResultItem = { kind: "tool-result"; toolCallId: string; toolName: string; output: string; isError: boolean };

/** A command run_command ran (without asking, or allowed by a human): every one is shown. */
export type CommandItem = {
  kind: "command";
  command: string;
  cwd: string;
  decision: "policy" | "human";
  exitCode: number | null;
  signal: string | null;
  timedOut: boolean;
  durationMs: number;
};

/** One line about the agent's process: its result, an error or warning, usage, session, a system message, a raw line. */
export type NoteItem = { kind: "note"; tone: "muted" | "ok" | "warn" | "error" | "you" | "raw"; text: string };

export type OutputItem =
  | { kind: "text"; text: string }
  | { kind: "thinking"; id: string; text: string; done: boolean }
  | ToolItem
  | ToolResultItem
  | { kind: "request"; requestId: string }
  | { kind: "steer"; text: string }
  | CommandItem
  | NoteItem;
