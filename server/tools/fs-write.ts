import { copyFile, mkdir, readFile, rename, stat, unlink, writeFile } from "node:fs/promises";
import { dirname } from "node:path";
import { z } from "zod";
import { fsError } from "./fs-read";
import { guardedTool, type Access } from "./guard";
import { resolveWorkspacePath, type WorkspacePath } from "./paths";
import type { ToolContext } from "./tool-context";

/** write_file, create_file, edit_file, delete_file, move_file. Each reports its change through onMutation. */

const exists = (path: string) => stat(path).then(() => true, () => false);

function writeAccess(ctx: ToolContext, path: string): Access[] {
  return [{ operation: "fs.write", resource: resolveWorkspacePath(ctx.cwd, path).real }];
}

function mutated(ctx: ToolContext, toolName: string, target: WorkspacePath, details: Record<string, unknown>): void {
  ctx.onMutation?.({ toolName, operation: "fs.write", path: target.abs, details });
}

async function writeText(target: WorkspacePath, content: string, flag: "w" | "wx"): Promise<void> {
  try {
    await mkdir(dirname(target.abs), { recursive: true });
    await writeFile(target.abs, content, { flag });
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === "EEXIST") throw new Error(`${target.display} already exists; use write_file to replace it or edit_file to change it`);
    throw fsError(err, target.display);
  }
}

const WriteInput = z.object({
  path: z.string().describe("File path, relative to the workspace; parent directories are created"),
  content: z.string().describe("The complete new content"),
});

const EditInput = z.object({
  path: z.string().describe("File path, relative to the workspace"),
  oldText: z.string().min(1).describe("Exact text to replace (include enough context to be unique)"),
  newText: z.string().describe("Replacement text"),
  replaceAll: z.boolean().optional().describe("Replace every occurrence instead of exactly one"),
});
type EditInput = z.infer<typeof EditInput>;

async function editFile(ctx: ToolContext, input: EditInput): Promise<string> {
  const target = resolveWorkspacePath(ctx.cwd, input.path);
  const before = await readFile(target.abs, "utf8").catch((err: unknown) => {
    throw fsError(err, target.display);
  });
  const count = before.split(input.oldText).length - 1;
  if (count === 0) throw new Error(`oldText was not found in ${target.display}; read the file and copy the text exactly`);
  if (count > 1 && !input.replaceAll) {
    throw new Error(`oldText occurs ${count} times in ${target.display}; add surrounding context to make it unique, or pass replaceAll: true`);
  }
  const after = input.replaceAll ? before.split(input.oldText).join(input.newText) : before.replace(input.oldText, () => input.newText);
  await writeText(target, after, "w");
  mutated(ctx, "edit_file", target, { replacements: count, bytes: Buffer.byteLength(after) });
  return `Edited ${target.display} — replaced ${count} ${count === 1 ? "occurrence" : "occurrences"}, now ${Buffer.byteLength(after)} bytes`;
}

async function moveFile(ctx: ToolContext, from: WorkspacePath, to: WorkspacePath): Promise<string> {
  try {
    if ((await stat(from.abs)).isDirectory()) throw new Error(`${from.display} is a directory; move_file moves files`);
  } catch (err) {
    throw fsError(err, from.display);
  }
  if (await exists(to.abs)) throw new Error(`${to.display} already exists; delete it first or pick another name`);
  await mkdir(dirname(to.abs), { recursive: true });
  try {
    await rename(from.abs, to.abs);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== "EXDEV") throw fsError(err, from.display);
    await copyFile(from.abs, to.abs);
    await unlink(from.abs);
  }
  mutated(ctx, "move_file", to, { from: from.abs });
  return `Moved ${from.display} to ${to.display}`;
}

export function writeFileTools(ctx: ToolContext) {
  return {
    write_file: guardedTool(ctx, "write_file", {
      description: "Write a file of the workspace with the given content, creating it or replacing it whole.",
      inputSchema: WriteInput,
      access: (input) => writeAccess(ctx, input.path),
      run: async (input) => {
        const target = resolveWorkspacePath(ctx.cwd, input.path);
        const created = !(await exists(target.abs));
        await writeText(target, input.content, "w");
        const bytes = Buffer.byteLength(input.content);
        mutated(ctx, "write_file", target, { bytes, created });
        return `Wrote ${target.display} — ${bytes} bytes (${created ? "created" : "replaced"})`;
      },
    }),
    create_file: guardedTool(ctx, "create_file", {
      description: "Create a new file of the workspace; fails if it already exists.",
      inputSchema: WriteInput,
      access: (input) => writeAccess(ctx, input.path),
      run: async (input) => {
        const target = resolveWorkspacePath(ctx.cwd, input.path);
        await writeText(target, input.content, "wx");
        const bytes = Buffer.byteLength(input.content);
        mutated(ctx, "create_file", target, { bytes, created: true });
        return `Created ${target.display} — ${bytes} bytes`;
      },
    }),
    edit_file: guardedTool(ctx, "edit_file", {
      description: "Replace exact text in a file: oldText must occur exactly once unless replaceAll is set.",
      inputSchema: EditInput,
      access: (input) => writeAccess(ctx, input.path),
      run: (input) => editFile(ctx, input),
    }),
    delete_file: guardedTool(ctx, "delete_file", {
      description: "Delete a file of the workspace.",
      inputSchema: z.object({ path: z.string().describe("File path, relative to the workspace") }),
      access: (input) => writeAccess(ctx, input.path),
      run: async (input) => {
        const target = resolveWorkspacePath(ctx.cwd, input.path);
        try {
          if ((await stat(target.abs)).isDirectory()) throw new Error(`${target.display} is a directory; delete_file deletes files`);
          await unlink(target.abs);
        } catch (err) {
          throw fsError(err, target.display);
        }
        mutated(ctx, "delete_file", target, { deleted: true });
        return `Deleted ${target.display}`;
      },
    }),
    move_file: guardedTool(ctx, "move_file", {
      description: "Move or rename a file; fails if the destination exists.",
      inputSchema: z.object({ from: z.string().describe("Current path"), to: z.string().describe("New path") }),
      access: (input) => [...writeAccess(ctx, input.from), ...writeAccess(ctx, input.to)],
      run: (input) => moveFile(ctx, resolveWorkspacePath(ctx.cwd, input.from), resolveWorkspacePath(ctx.cwd, input.to)),
    }),
  };
}
