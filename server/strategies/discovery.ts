import { REPO_ROOT } from "../paths";
import { readdir, readFile, stat } from "node:fs/promises";
import { basename, dirname, extname, join, resolve } from "node:path";
import { z } from "zod";
import type { StrategyEntry, StrategySource } from "../../shared/strategy";
import { formatIssue, StrategyError } from "./errors";
import { checkStrategyFile, formatOf } from "./loader";
import type { StrategyTypeRegistry } from "./registry";

/**
 * Where strategies are found, in this order (an earlier one wins an id):
 * `<cwd>/strategies`, `<cwd>/.comma/strategies`, `<home>/strategies`, the project manifest
 * (`comma-project.json`: `{name, strategies: {id: {path, description?}}}`, paths relative to the
 * manifest; the reference's `strategies: [path, ...]` form works too), then the bundled examples.
 * A strategy's id is its file name without extension (or its manifest key); an id already taken
 * is qualified as `<source>:<file name>`. Broken files and manifests are listed, never thrown.
 */

export const BUNDLED_STRATEGIES_DIR = join(REPO_ROOT, "server", "strategies", "examples");
export const MANIFEST_FILE = "comma-project.json";

export type DiscoverOptions = {
  cwd: string;
  home?: string;
  /** Relative to cwd; defaults to `comma-project.json` (silently skipped when absent). */
  manifestPath?: string;
  registry?: StrategyTypeRegistry;
  /** Include the bundled examples (default true). */
  bundled?: boolean;
};

export type StrategyCandidate = { id: string; path: string; source: StrategySource; description?: string; error?: string };

const ManifestEntry = z.looseObject({ path: z.string().min(1), description: z.string().optional() });
const Manifest = z.looseObject({
  name: z.string().optional(),
  strategies: z.union([z.record(z.string(), ManifestEntry), z.array(z.string().min(1))]),
});

/** Every strategy file found, with the validation result of each. */
export async function discoverStrategies(options: DiscoverOptions): Promise<StrategyEntry[]> {
  const candidates = await listStrategyCandidates(options);
  return Promise.all(
    candidates.map(async (candidate): Promise<StrategyEntry> => {
      const base = { id: candidate.id, path: candidate.path, source: candidate.source };
      if (candidate.error) return { ...base, name: candidate.id, valid: false, error: candidate.error, warnings: [] };
      const check = await checkStrategyFile(candidate.path, { cwd: options.cwd, registry: options.registry });
      const description = candidate.description ?? (check.valid ? check.strategy.description : undefined);
      const described = description === undefined ? {} : { description };
      if (check.valid) return { ...base, name: check.strategy.name, ...described, valid: true, warnings: check.warnings };
      const error = check.issues.map(formatIssue).join("\n");
      return { ...base, name: candidate.id, ...described, valid: false, error, warnings: check.warnings };
    }),
  );
}

/** The strategy files and manifest entries, without reading the strategies themselves. */
export async function listStrategyCandidates(options: DiscoverOptions): Promise<StrategyCandidate[]> {
  const { cwd, home } = options;
  const groups = await Promise.all([
    scanDir(join(cwd, "strategies"), "cwd"),
    scanDir(join(cwd, ".comma", "strategies"), "comma"),
    home ? scanDir(join(home, "strategies"), "home") : [],
    readManifest(cwd, options.manifestPath),
    options.bundled === false ? [] : scanDir(BUNDLED_STRATEGIES_DIR, "bundled"),
  ]);
  const paths = new Set<string>();
  const ids = new Set<string>();
  const out: StrategyCandidate[] = [];
  for (const candidate of groups.flat()) {
    if (!candidate.error && paths.has(candidate.path)) continue;
    paths.add(candidate.path);
    let id = candidate.id;
    if (ids.has(id)) id = `${candidate.source}:${candidate.source === "manifest" ? candidate.id : basename(candidate.path)}`;
    for (let n = 2; ids.has(id); n++) id = `${id.replace(/#\d+$/, "")}#${n}`;
    ids.add(id);
    out.push({ ...candidate, id });
  }
  return out;
}

/**
 * The file a run's `strategyPath` names: a path relative to the run's cwd (or absolute), or else
 * the id of a discovered strategy (`demo`). Throws STRATEGY_NOT_FOUND.
 */
export async function resolveStrategyPath(strategyPath: string, cwd: string, options: Omit<DiscoverOptions, "cwd"> = {}): Promise<string> {
  const direct = resolve(cwd, strategyPath);
  if (await stat(direct).then(() => true, () => false)) return direct;
  const candidates = await listStrategyCandidates({ ...options, cwd });
  const match = candidates.find((c) => c.id === strategyPath && !c.error);
  if (match) return match.path;
  const looksLikeId = !/[/\\]/.test(strategyPath) && !formatOf(strategyPath);
  const known = candidates.filter((c) => !c.error).map((c) => c.id).join(", ");
  throw StrategyError.notFound(direct, looksLikeId ? ` (and no strategy has the id "${strategyPath}"; known ids: ${known || "none"})` : "");
}

async function scanDir(dir: string, source: StrategySource): Promise<StrategyCandidate[]> {
  const entries = await readdir(dir, { withFileTypes: true }).catch(() => []);
  return entries
    .filter((entry) => (entry.isFile() || entry.isSymbolicLink()) && formatOf(entry.name) && !entry.name.startsWith("."))
    .map((entry) => entry.name)
    .sort()
    .map((name) => ({ id: basename(name, extname(name)), path: join(dir, name), source }));
}

async function readManifest(cwd: string, manifestPath: string | undefined): Promise<StrategyCandidate[]> {
  const path = resolve(cwd, manifestPath ?? MANIFEST_FILE);
  const broken = (error: string): StrategyCandidate[] => [{ id: basename(path, extname(path)), path, source: "manifest", error }];
  let text: string;
  try {
    text = await readFile(path, "utf8");
  } catch {
    return manifestPath ? broken(`Manifest not found: ${path}`) : [];
  }
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (err) {
    return broken(`Manifest ${path} is not valid JSON: ${err instanceof Error ? err.message : String(err)}`);
  }
  const parsed = Manifest.safeParse(json);
  if (!parsed.success) {
    const why = parsed.error.issues.map((i) => `${i.path.map(String).join(".") || "(top level)"}: ${i.message}`).join("; ");
    return broken(`Manifest ${path} is invalid: ${why} (expected {name, strategies: {id: {path, description?}}})`);
  }
  const base = dirname(path);
  const { strategies } = parsed.data;
  if (Array.isArray(strategies)) {
    return strategies.map((p) => ({ id: basename(p, extname(p)), path: resolve(base, p), source: "manifest" as const }));
  }
  return Object.entries(strategies).map(([id, entry]) => ({
    id,
    path: resolve(base, entry.path),
    source: "manifest" as const,
    ...(entry.description === undefined ? {} : { description: entry.description }),
  }));
}
