import { ClaudeParser } from "./claude-parser";
import { makeGenericProvider } from "./generic";

/** Amp: `amp -x <prompt> --stream-json` (execute mode) prints Claude-compatible JSON lines. */
export const ampProvider = makeGenericProvider({
  name: "amp",
  displayName: "Amp",
  command: "amp",
  promptFlag: "-x",
  args: ["--stream-json"],
  permissionArgs: { bypass: ["--dangerously-allow-all"] },
  parser: () => new ClaudeParser(),
  structuredOutput: true,
});
