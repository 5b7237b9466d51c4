import { ClaudeParser } from "./claude-parser";
import { makeGenericProvider } from "./generic";

/** Cursor's CLI agent: `cursor-agent -p --output-format stream-json <prompt>` prints Claude-like JSON lines. */
export const cursorAgentProvider = makeGenericProvider({
  name: "cursor-agent",
  displayName: "Cursor Agent",
  command: "cursor-agent",
  promptFlag: null,
  args: ["-p", "--output-format", "stream-json"],
  permissionArgs: { bypass: ["--force"] },
  modelFlag: "--model",
  resumeFlag: "--resume",
  parser: () => new ClaudeParser(),
  structuredOutput: true,
});
