import { makeGenericProvider } from "./generic";

/**
 * Gemini CLI: `gemini --output-format stream-json -p <prompt>` (headless). Its stream-json events
 * are init, message (user and assistant chunks), tool_use, tool_result, error, result: not
 * Claude's shape, so the generic parser reads them best-effort (assistant text, warnings).
 * Uncertain, from its docs and not run here: `--output-format stream-json` needs a recent
 * release; `--yolo` approves every tool and `--approval-mode auto_edit` file edits only;
 * GEMINI_CLI_TRUST_WORKSPACE=true is what other integrators set so a headless run in an
 * untrusted folder (a fresh worktree) is not refused. No resume by session id: resumeStyle none.
 */
export const geminiProvider = makeGenericProvider({
  name: "gemini",
  displayName: "Gemini CLI",
  command: "gemini",
  promptFlag: "-p",
  args: ["--output-format", "stream-json"],
  permissionArgs: { bypass: ["--yolo"], acceptEdits: ["--approval-mode", "auto_edit"] },
  modelFlag: "-m",
  env: () => ({ GEMINI_CLI_TRUST_WORKSPACE: "true" }),
});
