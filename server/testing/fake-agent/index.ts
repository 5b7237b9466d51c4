/** The steps of the scriptable fake agent CLI (fake-agent.mjs: Claude's flags and stream-json output). */
export type FakeAgentStep =
  | { text: string }
  | { thinking: string }
  | { write: { path: string; content: string } }
  | { bash: string }
  | { sleep: number }
  | { waitFile: string }
  | { signal: unknown }
  | { done: string }
  | { questions: { id: string; question: string }[] }
  | { result: string; isError?: boolean; subtype?: string }
  | { hang: true }
  | { crash: number }
  | { exit: number }
  | { stderr: string }
  | { hugeLine: number }
  | { lines: { count: number; perSecond?: number; textBytes?: number; stamp?: boolean } }
  | { catFile: string }
  | { rateLimit: { resetsAt?: string } }
  | { permission: { tool: string; input: Record<string, unknown> } };

/**
 * `ignoreCommitRequest`: answer Switchyard's one commit request (cleanup) without committing;
 * `commitWithoutSignal`: commit on that request but write no signal.json (as real CLIs often do).
 */
export type FakeAgentScript = FakeAgentStep[] | { steps: FakeAgentStep[]; resume?: FakeAgentStep[][]; ignoreCommitRequest?: boolean; commitWithoutSignal?: boolean };

/** A task with the fake agent's script embedded as a ```fake-agent block. */
export function fakeAgentPrompt(task: string, script: FakeAgentScript): string {
  return `${task}\n\n\`\`\`fake-agent\n${JSON.stringify(script)}\n\`\`\`\n`;
}
