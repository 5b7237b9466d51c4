import { makeGenericProvider } from "./generic";

/**
 * Aider: `aider --message <prompt>` runs one instruction and exits. `--no-pretty --no-stream`
 * give plain lines for the generic parser, `--no-check-update` keeps it off the network.
 * `--yes-always` answers every confirmation yes: bypass and acceptEdits both need it, since a
 * headless aider (stdin closed) cannot ask; what it does at a confirmation in ask mode is
 * uncertain (declines or stops). Aider commits its edits itself, on the agent's worktree branch.
 * From its docs, not run here. Aider has no MCP client: no switchyard MCP server (its agents can
 * run `yard ask` / `yard listen`, on their PATH, through its shell commands).
 */
export const aiderProvider = makeGenericProvider({
  name: "aider",
  displayName: "Aider",
  command: "aider",
  promptFlag: "--message",
  args: ["--no-pretty", "--no-stream", "--no-check-update"],
  permissionArgs: { bypass: ["--yes-always"], acceptEdits: ["--yes-always"] },
  modelFlag: "--model",
  askMeans: "A headless aider cannot ask you: at a confirmation it declines or stops.",
});
