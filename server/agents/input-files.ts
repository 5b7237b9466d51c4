import { existsSync } from "node:fs";
import { mkdir, readFile, rm, writeFile } from "node:fs/promises";
import { dirname, join, normalize } from "node:path";
import { AgentSignal, type AgentMode } from "../../shared/agents";

/** The agent's input (`.switchyard/input/`) and its completion signal (`.switchyard/output/signal.json`). */

export const signalPathOf = (workspace: string) => join(workspace, ".switchyard", "output", "signal.json");

export interface InputFiles {
  agentId: string;
  alias: string;
  mode: AgentMode;
  task: string;
  provider: string;
  files?: Record<string, string>;
}

const yamlString = (s: string) => JSON.stringify(s);

export async function writeInputFiles(workspace: string, input: InputFiles) {
  const inputDir = join(workspace, ".switchyard", "input");
  await mkdir(inputDir, { recursive: true });
  await mkdir(join(workspace, ".switchyard", "output"), { recursive: true });
  const extra = Object.entries(input.files ?? {});
  for (const [rel, content] of extra) {
    const n = normalize(rel);
    if (n.startsWith("..") || n.startsWith("/")) throw new Error(`input file "${rel}" must stay inside the input directory`);
    const path = join(inputDir, n);
    await mkdir(dirname(path), { recursive: true });
    await writeFile(path, content);
  }
  const taskPath = join(inputDir, "task.md");
  await writeFile(taskPath, `---\nagentId: ${yamlString(input.agentId)}\nalias: ${yamlString(input.alias)}\nmode: ${input.mode}\n---\n\n${input.task}\n`);
  const manifestPath = join(inputDir, "manifest.json");
  const manifest = { agentId: input.agentId, alias: input.alias, mode: input.mode, provider: input.provider, files: ["task.md", ...extra.map(([rel]) => normalize(rel))] };
  await writeFile(manifestPath, `${JSON.stringify(manifest, null, 2)}\n`);
  await clearSignal(workspace);
  return { inputDir, taskPath, manifestPath, signalPath: signalPathOf(workspace) };
}

/** null when absent; `{error}` for malformed JSON or a shape that is not a signal. */
export async function readSignal(workspace: string): Promise<{ signal: AgentSignal } | { error: string } | null> {
  const path = signalPathOf(workspace);
  if (!existsSync(path)) return null;
  let data: unknown;
  try {
    data = JSON.parse(await readFile(path, "utf8"));
  } catch (err) {
    return { error: `not valid JSON (${(err as Error).message})` };
  }
  const parsed = AgentSignal.safeParse(data);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    return { error: `expected {"status":"done"|"questions"|"error", ...}: ${issue ? `${issue.path.join(".") || "(root)"}: ${issue.message}` : "bad shape"}` };
  }
  return { signal: parsed.data };
}

export async function clearSignal(workspace: string): Promise<void> {
  await rm(signalPathOf(workspace), { force: true });
}
