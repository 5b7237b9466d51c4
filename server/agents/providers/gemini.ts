import { makeGenericProvider } from "./generic";

/**
 * Gemini CLI: `gemini --output-format stream-json -p <prompt>` (headless). Its stream-json events
 * are init, message (user and assistant chunks), tool_use, tool_result, error, result: not
 * Claude's shape, so the generic parser reads them best-effort (assistant text, warnings).
 * Uncertain, from its docs and not run here: `--output-format stream-json` needs a recent
 * release; `--yolo` approves every tool and `--approval-mode auto_edit` file edits only;
 * GEMINI_CLI_TRUST_WORKSPACE=true is what other integrators set so a headless run in an
 * untrusted folder (a fresh worktree) is not refused; `--allowed-tools run_shell_command(git add)`
 * (and commit, status, diff, log) lets auto_edit commit. No resume by session id: resumeStyle none,
 * so work it leaves uncommitted is committed by Switchyard (SWITCHYARD_AGENT_AUTOCOMMIT).
 */
/** Shell commands a headless run may use without confirmation: what committing in its worktree needs. */
const GEMINI_GIT_ALLOW = ["add", "commit", "status", "diff", "log"].map((c) => `run_shell_command(git ${c})`);

export const geminiProvider = makeGenericProvider({
  name: "gemini",
  displayName: "Gemini CLI",
  command: "gemini",
  promptFlag: "-p",
  args: ["--output-format", "stream-json"],
  // auto_edit approves file edits only: the git commands an agent commits with are allowed by name
  permissionArgs: { bypass: ["--yolo"], acceptEdits: ["--approval-mode", "auto_edit", "--allowed-tools", ...GEMINI_GIT_ALLOW] },
  modelFlag: "-m",
  env: () => ({ GEMINI_CLI_TRUST_WORKSPACE: "true" }),
});
