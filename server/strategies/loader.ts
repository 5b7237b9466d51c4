import { readFile, stat } from "node:fs/promises";
import { extname, isAbsolute, relative, resolve } from "node:path";
import { formatPath, type Strategy, type StrategyFormat, type StrategyIssue, type StrategyWarning } from "../../shared/strategy";
import { StrategyError, type StrategyErrorCode } from "./errors";
import type { StrategyTypeRegistry } from "./registry";
import type { SourceFormat } from "../../shared/strategy";
import { parseSource } from "./source";
import { validateStrategy, type PathIssue } from "./validate";

/**
 * Loads strategy files: text -> JS value (JSON, JSONC, YAML) -> validated `Strategy`. Problems are
 * data: `check*` return them, `parseStrategy` / `loadStrategyFile` throw them as a StrategyError.
 * Issues carry the file, the path, and the line and column of the offending node.
 */

export type LoadedStrategy = { strategy: Strategy; warnings: StrategyWarning[]; path: string; format: SourceFormat };
export type StrategyCheck =
  | { valid: true; strategy: Strategy; issues: StrategyIssue[]; warnings: StrategyWarning[] }
  | { valid: false; code: StrategyErrorCode; issues: StrategyIssue[]; warnings: StrategyWarning[] };
export type TextOptions = { format: StrategyFormat; fileName?: string; registry?: StrategyTypeRegistry };
export type FileOptions = { cwd?: string; registry?: StrategyTypeRegistry; displayName?: string };

export const STRATEGY_EXTENSIONS = [".json", ".jsonc", ".yaml", ".yml"] as const;
/** A strategy is a few KB; refuse to read anything big (or endless, like a device). */
export const MAX_STRATEGY_BYTES = 1024 * 1024;

/** The format of a file name or a format name: `.yml` and `yml` are YAML. */
export function formatOf(nameOrFormat: string): SourceFormat | undefined {
  const ext = nameOrFormat.includes(".") ? extname(nameOrFormat).slice(1) : nameOrFormat;
  if (ext === "json" || ext === "jsonc") return ext;
  if (ext === "yaml" || ext === "yml") return "yaml";
  return undefined;
}

/** Parses and validates strategy text; never throws. */
export function checkStrategyText(text: string, options: TextOptions): StrategyCheck {
  const format = formatOf(options.format) ?? "yaml";
  const file = options.fileName ?? `strategy.${options.format}`;
  const parsed = parseSource(text, format);
  if (!parsed.ok) {
    const issues = parsed.issues.map((issue) => ({ file, path: "", ...issue }));
    return { valid: false, code: "STRATEGY_PARSE_ERROR", issues, warnings: [] };
  }
  const result = validateStrategy(parsed.value, options.registry);
  const place = (issue: PathIssue) => ({ path: formatPath(issue.path), message: issue.message, ...parsed.locate(issue.path) });
  const warnings = result.warnings.map(place);
  if (!result.strategy) {
    return { valid: false, code: "STRATEGY_INVALID", issues: result.issues.map((issue) => ({ file, ...place(issue) })), warnings };
  }
  return { valid: true, strategy: result.strategy, issues: [], warnings };
}

/** Parses and validates strategy text; throws a StrategyError listing every issue. */
export function parseStrategy(text: string, options: TextOptions): LoadedStrategy {
  const file = options.fileName ?? `strategy.${options.format}`;
  const check = checkStrategyText(text, { ...options, fileName: file });
  if (!check.valid) throw new StrategyError(check.code, file, check.issues);
  return { strategy: check.strategy, warnings: check.warnings, path: file, format: formatOf(options.format) ?? "yaml" };
}

export type FileCheck = StrategyCheck & { path: string; format?: SourceFormat };

/** Reads, parses and validates a strategy file (relative to `cwd`); never throws. */
export async function checkStrategyFile(path: string, options: FileOptions = {}): Promise<FileCheck> {
  const cwd = options.cwd ?? process.cwd();
  const abs = resolve(cwd, path);
  const file = options.displayName ?? displayPath(abs, cwd);
  const fail = (code: StrategyErrorCode, message: string, issueFile = file): FileCheck => ({
    valid: false, code, path: abs, issues: [{ file: issueFile, path: "", message }], warnings: [],
  });
  const format = formatOf(abs);
  const info = await stat(abs).catch(() => undefined);
  if (!info) return fail("STRATEGY_NOT_FOUND", `Strategy file not found: ${abs}`, abs);
  if (!format) return fail("STRATEGY_INVALID", `unsupported file type "${extname(abs)}" (expected ${STRATEGY_EXTENSIONS.join(", ")})`);
  if (!info.isFile()) return fail("STRATEGY_INVALID", "not a regular file");
  if (info.size > MAX_STRATEGY_BYTES) return fail("STRATEGY_INVALID", `the file is too large (${info.size} bytes, at most ${MAX_STRATEGY_BYTES})`);
  const text = await readFile(abs, "utf8");
  // the same text checks the same: prepared runs of an unchanged file skip parsing and validation
  const key = options.registry ? undefined : `${abs}\0${file}\0${format}\0${text}`;
  const known = key ? checked.get(key) : undefined;
  if (known) return structuredClone(known);
  const result: FileCheck = { ...checkStrategyText(text, { format, fileName: file, registry: options.registry }), path: abs, format };
  if (key) {
    checked.set(key, structuredClone(result));
    if (checked.size > 64) checked.delete(checked.keys().next().value!);
  }
  return result;
}

/** Recent check results by file and exact text (a few, small). */
const checked = new Map<string, FileCheck>();

/** Reads, parses and validates a strategy file; throws a StrategyError (STRATEGY_NOT_FOUND too). */
export async function loadStrategyFile(path: string, options: FileOptions = {}): Promise<LoadedStrategy> {
  const check = await checkStrategyFile(path, options);
  if (!check.valid) throw errorOf(check);
  return { strategy: check.strategy, warnings: check.warnings, path: check.path, format: check.format ?? "yaml" };
}

/** The StrategyError a failed check stands for. */
export function errorOf(check: Extract<FileCheck, { valid: false }>): StrategyError {
  if (check.code === "STRATEGY_NOT_FOUND") return StrategyError.notFound(check.path);
  return new StrategyError(check.code, check.issues[0]?.file ?? check.path, check.issues);
}

/** `strategies/x.yaml` when the file is under `cwd`, else the absolute path. */
export function displayPath(abs: string, cwd: string): string {
  const rel = relative(cwd, abs);
  return rel && !rel.startsWith("..") && !isAbsolute(rel) ? rel : abs;
}
