import { readFile, stat } from "node:fs/promises";
import { z } from "zod";
import { fsError, isBinary } from "./fs-read";
import { fileGlob, pathGlob } from "./globs";
import { guardedTool } from "./guard";
import { displayPath, resolveWorkspacePath } from "./paths";
import type { ToolContext } from "./tool-context";
import { walk } from "./walk";

/** glob (find files by name) and search_files (find lines by regex). */

const MAX_GLOB_RESULTS = 1000;
const MAX_DEPTH = 64;
const DEFAULT_MAX_RESULTS = 100;
const MAX_SEARCH_FILE_BYTES = 2 * 1024 * 1024;
const MAX_LINE_CHARS = 240;

/** Hidden entries are walked only when the pattern names one (`.github/**`, `**\/.env`). */
const mentionsHidden = (pattern: string | undefined): boolean => pattern !== undefined && /(^|\/)\./.test(pattern);

async function directoryOf(cwd: string, path: string): Promise<{ abs: string; display: string; isFile: boolean }> {
  const target = resolveWorkspacePath(cwd, path);
  try {
    return { abs: target.abs, display: target.display, isFile: (await stat(target.abs)).isFile() };
  } catch (err) {
    throw fsError(err, target.display);
  }
}

const GlobInput = z.object({
  pattern: z.string().min(1).describe("Glob pattern, e.g. \"**/*.ts\" or \"src/*.{js,json}\" (relative to path)"),
  path: z.string().optional().describe("Directory to search from, relative to the workspace (default \".\")"),
});
type GlobInput = z.infer<typeof GlobInput>;

async function globTool(cwd: string, input: GlobInput, signal: AbortSignal): Promise<string> {
  const base = await directoryOf(cwd, input.path ?? ".");
  if (base.isFile) throw new Error(`${base.display} is a file; path must be a directory`);
  const matches = fileGlob(input.pattern);
  const found: string[] = [];
  let more = false;
  for await (const entry of walk(base.abs, { maxDepth: MAX_DEPTH, includeHidden: mentionsHidden(input.pattern), signal })) {
    if (entry.kind === "dir" || !matches(entry.rel)) continue;
    if (found.length === MAX_GLOB_RESULTS) {
      more = true;
      break;
    }
    found.push(displayPath(cwd, entry.abs));
  }
  const where = input.path ? ` in ${base.display}` : "";
  const cut = more ? ` (stopped at ${MAX_GLOB_RESULTS}; narrow the pattern)` : "";
  const header = `Found ${found.length} ${found.length === 1 ? "file" : "files"} matching ${JSON.stringify(input.pattern)}${where}${cut}`;
  return found.length > 0 ? `${header}\n\n${found.join("\n")}` : header;
}

const SearchInput = z.object({
  pattern: z.string().min(1).describe("JavaScript regular expression, matched against each line"),
  path: z.string().optional().describe("File or directory to search, relative to the workspace (default \".\")"),
  glob: z.string().optional().describe("Only files matching this glob, e.g. \"*.ts\" or \"src/**/*.md\""),
  maxResults: z.number().int().min(1).max(1000).optional().describe(`Most matching lines to return (default ${DEFAULT_MAX_RESULTS})`),
});
type SearchInput = z.infer<typeof SearchInput>;

function compile(pattern: string): RegExp {
  try {
    return new RegExp(pattern);
  } catch (err) {
    throw new Error(`Invalid regular expression ${JSON.stringify(pattern)}: ${(err as Error).message}`);
  }
}

/** Lines of one file matching, as `path:line: text`; binary and oversized files are skipped. */
async function searchFile(abs: string, shownAs: string, regex: RegExp, limit: number): Promise<string[]> {
  const info = await stat(abs).catch(() => undefined);
  if (!info?.isFile() || info.size > MAX_SEARCH_FILE_BYTES) return [];
  const buffer = await readFile(abs).catch(() => undefined);
  if (!buffer || isBinary(buffer)) return [];
  const hits: string[] = [];
  for (const [i, line] of buffer.toString("utf8").split("\n").entries()) {
    if (hits.length === limit) break;
    if (!regex.test(line)) continue;
    const text = line.length > MAX_LINE_CHARS ? `${line.slice(0, MAX_LINE_CHARS)}...` : line;
    hits.push(`${shownAs}:${i + 1}: ${text.trimEnd()}`);
  }
  return hits;
}

async function searchTool(cwd: string, input: SearchInput, signal: AbortSignal): Promise<string> {
  const regex = compile(input.pattern);
  const base = await directoryOf(cwd, input.path ?? ".");
  const limit = input.maxResults ?? DEFAULT_MAX_RESULTS;
  const filter = input.glob ? pathGlob(input.glob, { hidden: false }) : undefined;
  const hits: string[] = [];
  let files = 0;
  const scan = async (abs: string, rel: string): Promise<void> => {
    if (filter && !filter(rel)) return;
    const found = await searchFile(abs, displayPath(cwd, abs), regex, limit - hits.length);
    if (found.length > 0) files++;
    hits.push(...found);
  };
  if (base.isFile) await scan(base.abs, base.display);
  else {
    const includeHidden = mentionsHidden(input.glob);
    for await (const entry of walk(base.abs, { maxDepth: MAX_DEPTH, includeHidden, signal })) {
      if (hits.length >= limit) break;
      if (entry.kind === "file") await scan(entry.abs, entry.rel);
    }
  }
  const cut = hits.length >= limit ? ` (stopped at ${limit}; narrow the pattern or raise maxResults)` : "";
  const header = `Found ${hits.length} ${hits.length === 1 ? "match" : "matches"} in ${files} ${files === 1 ? "file" : "files"} for /${input.pattern}/${cut}`;
  return hits.length > 0 ? `${header}\n\n${hits.join("\n")}` : header;
}

export function searchTools(ctx: ToolContext) {
  return {
    glob: guardedTool(ctx, "glob", {
      description: "Find files by glob pattern (\"**/*.ts\"). Returns workspace-relative paths, one a line. Hidden files only when the pattern names them.",
      inputSchema: GlobInput,
      access: (input) => [{ operation: "fs.read", resource: resolveWorkspacePath(ctx.cwd, input.path ?? ".").real }],
      run: (input, signal) => globTool(ctx.cwd, input, signal),
    }),
    search_files: guardedTool(ctx, "search_files", {
      description: "Search file contents with a regular expression. Returns `path:line: text` for each matching line. Filter files with glob.",
      inputSchema: SearchInput,
      access: (input) => [{ operation: "fs.read", resource: resolveWorkspacePath(ctx.cwd, input.path ?? ".").real }],
      run: (input, signal) => searchTool(ctx.cwd, input, signal),
    }),
  };
}
