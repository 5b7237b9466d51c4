import { createHash } from "node:crypto";
import { readFile, stat } from "node:fs/promises";
import { z } from "zod";
import { guardedTool } from "./guard";
import { resolveWorkspacePath } from "./paths";
import type { ToolContext } from "./tool-context";
import { walk } from "./walk";

/** read_file and list_directory. Output formats follow the reference's recorded frames. */

export const DEFAULT_MAX_BYTES = 262_144;
/** Files larger than this are never loaded whole. */
const HARD_LIMIT_BYTES = 64 * 1024 * 1024;
const DEFAULT_MAX_DEPTH = 8;
const MAX_LISTED = 2000;

/** Errors a model can act on, instead of raw errno text. */
export function fsError(err: unknown, display: string): Error {
  const code = (err as NodeJS.ErrnoException).code;
  if (code === "ENOENT") return new Error(`Not found: ${display}`);
  if (code === "EISDIR") return new Error(`${display} is a directory; use list_directory`);
  if (code === "ENOTDIR") return new Error(`${display}: a part of the path is not a directory`);
  if (code === "EACCES" || code === "EPERM") return new Error(`Permission denied by the operating system: ${display}`);
  return err instanceof Error ? err : new Error(String(err));
}

/** NUL bytes in the first 8 KiB, or bytes that are not UTF-8. */
export function isBinary(buffer: Buffer): boolean {
  if (buffer.subarray(0, 8192).includes(0)) return true;
  try {
    new TextDecoder("utf-8", { fatal: true }).decode(buffer);
    return false;
  } catch {
    return true;
  }
}

const ReadFileInput = z.object({
  path: z.string().describe("File path, relative to the workspace"),
  startLine: z.number().int().min(1).optional().describe("First line to read (1-based)"),
  endLine: z.number().int().min(1).optional().describe("Last line to read (inclusive)"),
  maxBytes: z.number().int().min(1).optional().describe(`Most bytes of content to return (default ${DEFAULT_MAX_BYTES})`),
  allowBinary: z.boolean().optional().describe("Return a binary file as base64 instead of refusing"),
});
type ReadFileInput = z.infer<typeof ReadFileInput>;

/** Cuts text to at most maxBytes of UTF-8, at the last whole line when there is one. */
function cutToBytes(lines: string[], maxBytes: number): { kept: number; partial?: string } {
  let used = 0;
  for (const [i, line] of lines.entries()) {
    const size = Buffer.byteLength(line) + (i > 0 ? 1 : 0);
    if (used + size > maxBytes) {
      if (i > 0) return { kept: i };
      return { kept: 0, partial: Buffer.from(line).subarray(0, maxBytes).toString("utf8").replace(/\uFFFD+$/, "") };
    }
    used += size;
  }
  return { kept: lines.length };
}

function readText(display: string, buffer: Buffer, input: ReadFileInput, digest: string): string {
  const lines = buffer.toString("utf8").split("\n");
  const total = lines.length;
  const start = input.startLine ?? 1;
  const end = Math.min(input.endLine ?? total, total);
  if (start > total) throw new Error(`startLine ${start} is past the end of ${display} (${total} lines)`);
  if (end < start) throw new Error(`endLine ${input.endLine} is before startLine ${start}`);
  const selected = lines.slice(start - 1, end);
  const maxBytes = input.maxBytes ?? DEFAULT_MAX_BYTES;
  const { kept, partial } = cutToBytes(selected, maxBytes);
  const header = `Read ${display} — lines ${start}-`;
  const facts = `${buffer.length} bytes, sha256=${digest}`;
  if (kept === selected.length) return `${header}${end} of ${total}, ${facts}\n\n${selected.join("\n")}`;
  if (partial !== undefined) {
    return `${header}${start} of ${total}, ${facts}; line ${start} truncated at ${maxBytes} bytes\n\n${partial}`;
  }
  const last = start + kept - 1;
  return `${header}${last} of ${total}, ${facts}; truncated at ${maxBytes} bytes (continue with startLine=${last + 1})\n\n${selected.slice(0, kept).join("\n")}`;
}

async function readFileTool(cwd: string, input: ReadFileInput): Promise<string> {
  const target = resolveWorkspacePath(cwd, input.path);
  let buffer: Buffer;
  try {
    const info = await stat(target.abs);
    if (info.isDirectory()) throw Object.assign(new Error("directory"), { code: "EISDIR" });
    if (info.size > HARD_LIMIT_BYTES) throw new Error(`${target.display} is too large to read (${info.size} bytes; the limit is ${HARD_LIMIT_BYTES})`);
    buffer = await readFile(target.abs);
  } catch (err) {
    throw fsError(err, target.display);
  }
  const digest = createHash("sha256").update(buffer).digest("hex");
  if (!isBinary(buffer)) return readText(target.display, buffer, input, digest);
  if (!input.allowBinary) {
    throw new Error(`${target.display} is a binary file (${buffer.length} bytes, sha256=${digest}); pass allowBinary: true to read it as base64`);
  }
  const maxBytes = input.maxBytes ?? DEFAULT_MAX_BYTES;
  const shown = buffer.subarray(0, maxBytes);
  const cut = shown.length < buffer.length ? `; first ${shown.length} bytes` : "";
  return `Read ${target.display} — binary, ${buffer.length} bytes, sha256=${digest}, base64${cut}\n\n${shown.toString("base64")}`;
}

const ListDirectoryInput = z.object({
  path: z.string().describe("Directory, relative to the workspace (\".\" for the workspace itself)"),
  recursive: z.boolean().optional().describe("List subdirectories too"),
  maxDepth: z.number().int().min(1).optional().describe(`How deep to recurse (default ${DEFAULT_MAX_DEPTH})`),
  includeHidden: z.boolean().optional().describe("Include entries whose name starts with a dot"),
});
type ListDirectoryInput = z.infer<typeof ListDirectoryInput>;

async function listDirectoryTool(cwd: string, input: ListDirectoryInput, signal: AbortSignal): Promise<string> {
  const target = resolveWorkspacePath(cwd, input.path);
  try {
    if (!(await stat(target.abs)).isDirectory()) throw new Error(`${target.display} is a file, not a directory; use read_file`);
  } catch (err) {
    throw fsError(err, target.display);
  }
  const maxDepth = input.recursive ? (input.maxDepth ?? DEFAULT_MAX_DEPTH) : 1;
  const lines: string[] = [];
  let more = false;
  for await (const entry of walk(target.abs, { maxDepth, includeHidden: input.includeHidden ?? false, signal })) {
    if (lines.length === MAX_LISTED) {
      more = true;
      break;
    }
    const suffix = entry.kind === "dir" ? "/" : entry.kind === "symlink" ? "@" : "";
    const note = entry.notExpanded && input.recursive && entry.depth < maxDepth ? " (not expanded)" : "";
    lines.push(`${entry.rel}${suffix}${note}`);
  }
  const scope = input.recursive ? `, recursive to depth ${maxDepth}` : "";
  const hidden = input.includeHidden ? "" : ", hidden entries omitted";
  const cut = more ? `; stopped at ${MAX_LISTED} entries` : "";
  const header = `Listed ${target.display} — ${lines.length} ${lines.length === 1 ? "entry" : "entries"}${scope}${hidden}${cut}`;
  return lines.length > 0 ? `${header}\n\n${lines.join("\n")}` : `${header} (empty)`;
}

export function readFileTools(ctx: ToolContext) {
  return {
    read_file: guardedTool(ctx, "read_file", {
      description:
        "Read a text file of the workspace. Returns a header (line range, size, sha256) and the content. Use startLine/endLine for large files.",
      inputSchema: ReadFileInput,
      access: (input) => [{ operation: "fs.read", resource: resolveWorkspacePath(ctx.cwd, input.path).real }],
      run: (input) => readFileTool(ctx.cwd, input),
    }),
    list_directory: guardedTool(ctx, "list_directory", {
      description: "List a directory of the workspace: one entry a line, directories end with /. Set recursive to include subdirectories.",
      inputSchema: ListDirectoryInput,
      access: (input) => [{ operation: "fs.read", resource: resolveWorkspacePath(ctx.cwd, input.path).real }],
      run: (input, signal) => listDirectoryTool(ctx.cwd, input, signal),
    }),
  };
}
