import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import type { AgentMode, AgentQuestion } from "../../shared/agents";
import { REPO_ROOT } from "../paths";
import { signalPathOf } from "./input-files";

/**
 * Prompts per mode from markdown templates (`server/agents/prompts/<mode>.md`), each overridable by
 * a file of the same name in `<SWITCHYARD_HOME>/prompts/`; communication.md (yard ask / listen /
 * answer) and completion.md (the signal.json contract) are appended to every one.
 */
const BUNDLED = join(REPO_ROOT, "server", "agents", "prompts");

function template(name: string, overridesDir?: string): string {
  const own = overridesDir ? join(overridesDir, `${name}.md`) : undefined;
  return readFileSync(own && existsSync(own) ? own : join(BUNDLED, `${name}.md`), "utf8");
}

function fill(text: string, values: Record<string, string>): string {
  return text.replace(/\{\{(\w+)\}\}/g, (m, key: string) => values[key] ?? m);
}

export interface PromptInput {
  mode: AgentMode;
  task: string;
  agentId: string;
  alias: string;
  workspacePath: string;
  overridesDir?: string;
}

export function buildPrompt(p: PromptInput): string {
  const values = {
    task: p.task.trim(),
    agentId: p.agentId,
    alias: p.alias,
    inputDir: join(p.workspacePath, ".switchyard", "input"),
    signalPath: signalPathOf(p.workspacePath),
  };
  return [template(p.mode, p.overridesDir), template("communication", p.overridesDir), template("completion", p.overridesDir)].map((t) => fill(t, values).trim()).join("\n\n") + "\n";
}

export function formatAnswersAsPrompt(questions: AgentQuestion[], answers: Record<string, string>): string {
  const parts = questions.map((q) => `Q (${q.id}): ${q.question}\nA: ${answers[q.id] ?? "(no answer)"}`);
  for (const [id, answer] of Object.entries(answers)) if (!questions.some((q) => q.id === id)) parts.push(`(${id}): ${answer}`);
  return `Here are the answers to your questions:\n\n${parts.join("\n\n")}\n\nContinue the task with these answers. When you are finished, write signal.json again as your last action.`;
}

export function missingSignalPrompt(signalPath: string): string {
  return `You stopped without writing ${signalPath}. If the task is finished, write it now as your last action ({"status":"done","result":{"message":"..."}}); if you need answers, write {"status":"questions",...}; if you cannot do it, write {"status":"error",...}.`;
}

/** The one resume that asks an idle agent to commit what it left uncommitted (cleanup). */
export function commitRequestPrompt(p: { workspacePath: string; branch: string | null; paths: string[]; overridesDir?: string }): string {
  const shown = p.paths.slice(0, 50).map((path) => `- ${path}`);
  if (p.paths.length > 50) shown.push(`- … and ${p.paths.length - 50} more`);
  return fill(template("commit-request", p.overridesDir), {
    workspacePath: p.workspacePath,
    branch: p.branch ?? "(detached)",
    paths: shown.join("\n"),
    signalPath: signalPathOf(p.workspacePath),
  }).trim();
}
