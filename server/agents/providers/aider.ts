import { makeGenericProvider } from "./generic";

/** Aider: `aider --message <prompt>` runs one instruction and exits; `--yes-always` for bypass. */
export const aiderProvider = makeGenericProvider({
  name: "aider",
  displayName: "Aider",
  command: "aider",
  promptFlag: "--message",
  args: ["--no-pretty", "--no-stream", "--no-check-update"],
  permissionArgs: { bypass: ["--yes-always"], acceptEdits: ["--yes-always"] },
  modelFlag: "--model",
});
