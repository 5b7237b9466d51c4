import { makeGenericProvider } from "./generic";

/**
 * opencode: `opencode run <prompt>` runs one message and exits, plain text output (generic
 * parser). `--model provider/model` picks the model. It has `--session <id>` but prints no session
 * id in plain text mode, so no resume (resumeStyle none). It has no permission flags: what it may
 * do is its own config's business. From its docs, not run here.
 */
export const opencodeProvider = makeGenericProvider({
  name: "opencode",
  displayName: "opencode",
  command: "opencode",
  promptFlag: null,
  args: ["run"],
  modelFlag: "--model",
});
