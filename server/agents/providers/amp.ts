import { ClaudeParser } from "./claude-parser";
import { makeGenericProvider } from "./generic";

/**
 * Amp: `amp --stream-json -x <prompt>` (execute mode) prints Claude Code-compatible JSON lines, so
 * the Claude parser reads them. `--dangerously-allow-all` skips every permission check. Resuming
 * a thread (`amp threads continue`) is not wired: resumeStyle none. From its docs, not run here;
 * a release without `--stream-json` would print plain text, which the Claude parser keeps raw.
 */
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
