import { makeGenericProvider } from "./generic";

/** opencode: `opencode run <prompt>`, plain text output (generic parser). */
export const opencodeProvider = makeGenericProvider({
  name: "opencode",
  displayName: "opencode",
  command: "opencode",
  promptFlag: null,
  args: ["run"],
  modelFlag: "--model",
});
