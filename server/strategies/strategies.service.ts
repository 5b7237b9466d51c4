import type { GetStrategyInput, ListStrategiesInput, StrategyEntry, ValidateStrategyInput } from "../../shared/strategy";
import { discoverStrategies, listStrategyCandidates, resolveStrategyPath, type DiscoverOptions } from "./discovery";
import { isStrategyError, StrategyError } from "./errors";
import { flowGraph, flowTree } from "./flow-graph";
import { checkStrategyFile, checkStrategyText, loadStrategyFile } from "./loader";
import type { StrategyTypeRegistry } from "./registry";

/** What the strategies domain needs from the server: SWITCHYARD_HOME and the type registry. */
export type StrategyDeps = { home: string; registry?: StrategyTypeRegistry };

export function listStrategies(input: ListStrategiesInput, deps: StrategyDeps): Promise<StrategyEntry[]> {
  return discoverStrategies({ cwd: input.cwd ?? process.cwd(), home: deps.home, manifestPath: input.manifestPath, registry: deps.registry });
}

/** A strategy by path (relative to cwd) or by discovered id, with its flow tree and graph. */
export async function getStrategy(input: GetStrategyInput, deps: StrategyDeps) {
  const cwd = input.cwd ?? process.cwd();
  const discover = { home: deps.home, manifestPath: input.manifestPath, registry: deps.registry };
  const file = input.id !== undefined ? await pathOfId(input.id, { ...discover, cwd }) : await resolveStrategyPath(input.path ?? "", cwd, discover);
  const loaded = await loadStrategyFile(file, { cwd, registry: deps.registry });
  const { strategy } = loaded;
  return { strategy, flowTree: flowTree(strategy), graph: flowGraph(strategy), warnings: loaded.warnings, path: loaded.path, format: loaded.format };
}

/** Validation as data: `{valid: false, issues}` rather than an error. */
export async function validateStrategySource(input: ValidateStrategyInput, deps: StrategyDeps) {
  if ("text" in input) {
    const check = checkStrategyText(input.text, { format: input.format, fileName: input.fileName, registry: deps.registry });
    return { valid: check.valid, issues: check.issues, warnings: check.warnings };
  }
  const cwd = input.cwd ?? process.cwd();
  let file: string;
  try {
    file = await resolveStrategyPath(input.path, cwd, { home: deps.home, registry: deps.registry });
  } catch (err) {
    if (isStrategyError(err)) return { valid: false, issues: err.issues, warnings: [] };
    throw err;
  }
  const check = await checkStrategyFile(file, { cwd, registry: deps.registry });
  return { valid: check.valid, issues: check.issues, warnings: check.warnings, path: check.path };
}

async function pathOfId(id: string, options: DiscoverOptions): Promise<string> {
  const candidates = await listStrategyCandidates(options);
  const match = candidates.find((c) => c.id === id);
  if (match) return match.path;
  const known = candidates.map((c) => c.id).join(", ") || "none";
  const message = `No strategy has the id "${id}" (known ids: ${known})`;
  throw new StrategyError("STRATEGY_NOT_FOUND", id, [{ file: id, path: "", message }], message);
}
