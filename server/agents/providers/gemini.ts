import { makeGenericProvider } from "./generic";

/** Gemini CLI: `gemini -p <prompt>`; `--yolo` approves every tool. Plain text output (generic parser). */
export const geminiProvider = makeGenericProvider({
  name: "gemini",
  displayName: "Gemini CLI",
  command: "gemini",
  promptFlag: "-p",
  args: [],
  permissionArgs: { bypass: ["--yolo"], acceptEdits: ["--approval-mode", "auto_edit"] },
  modelFlag: "-m",
});
