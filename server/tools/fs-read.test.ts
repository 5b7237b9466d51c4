import { createHash } from "node:crypto";
import { mkdirSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { tempWorkspace, testContext, toolRunner } from "../testing/tool-context";

let root: string;
let cwd: string;

beforeEach(() => {
  root = tempWorkspace();
  cwd = join(root, "work");
  mkdirSync(join(cwd, "src/lib/deep"), { recursive: true });
  mkdirSync(join(cwd, "node_modules/pkg"), { recursive: true });
  writeFileSync(join(cwd, "notes.txt"), "These are the notes. Line two.\n");
  writeFileSync(join(cwd, "lines.txt"), "one\ntwo\nthree\nfour\nfive");
  writeFileSync(join(cwd, ".env"), "SECRET=1\n");
  writeFileSync(join(cwd, "src/a.ts"), "export const a = 1;\n");
  writeFileSync(join(cwd, "src/lib/b.ts"), "export const b = 2;\n");
  writeFileSync(join(cwd, "src/lib/deep/c.ts"), "export const c = 3;\n");
  writeFileSync(join(cwd, "node_modules/pkg/index.js"), "module.exports = 1;\n");
  writeFileSync(join(cwd, "image.png"), Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x00, 0x01, 0xff]));
  writeFileSync(join(root, "outside.txt"), "outside\n");
});
afterEach(() => rmSync(root, { recursive: true, force: true }));

const sha = (text: string | Buffer) => createHash("sha256").update(text).digest("hex");

describe("read_file", () => {
  it("reads a file in the reference's format: lines, bytes, sha256, then the content", async () => {
    const run = toolRunner(testContext(cwd), ["read_file"]);
    const content = "These are the notes. Line two.\n";
    expect(await run("read_file", { path: "notes.txt" })).toBe(`Read notes.txt — lines 1-2 of 2, 31 bytes, sha256=${sha(content)}\n\n${content}`);
  });

  it("reads a line range; the header keeps the whole file's size and digest", async () => {
    const run = toolRunner(testContext(cwd), ["read"]);
    const out = await run("read_file", { path: "lines.txt", startLine: 2, endLine: 4 });
    expect(out).toBe(`Read lines.txt — lines 2-4 of 5, 23 bytes, sha256=${sha("one\ntwo\nthree\nfour\nfive")}\n\ntwo\nthree\nfour`);
    expect(await run("read_file", { path: "lines.txt", startLine: 4, endLine: 99 })).toMatch(/lines 4-5 of 5.*\n\nfour\nfive$/);
    await expect(run("read_file", { path: "lines.txt", startLine: 9 })).rejects.toThrow("startLine 9 is past the end of lines.txt (5 lines)");
  });

  it("cuts at maxBytes on a line boundary and says where to continue", async () => {
    const run = toolRunner(testContext(cwd), ["read_file"]);
    const out = await run("read_file", { path: "lines.txt", maxBytes: 9 });
    expect(out).toMatch(/^Read lines.txt — lines 1-2 of 5, 23 bytes, sha256=\w+; truncated at 9 bytes \(continue with startLine=3\)\n\none\ntwo$/);
  });

  it("refuses a binary file unless allowBinary, then returns base64", async () => {
    const run = toolRunner(testContext(cwd), ["read_file"]);
    await expect(run("read_file", { path: "image.png" })).rejects.toThrow(/image.png is a binary file \(7 bytes, sha256=\w{64}\); pass allowBinary: true/);
    const out = await run("read_file", { path: "image.png", allowBinary: true });
    expect(out).toBe(`Read image.png — binary, 7 bytes, sha256=${sha(Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x00, 0x01, 0xff]))}, base64\n\niVBORwAB/w==`);
  });

  it("clear errors for a missing file or a directory", async () => {
    const run = toolRunner(testContext(cwd), ["read_file"]);
    await expect(run("read_file", { path: "nope.txt" })).rejects.toThrow("Not found: nope.txt");
    await expect(run("read_file", { path: "src" })).rejects.toThrow("src is a directory; use list_directory");
  });

  it("a read outside the cwd asks first (request_permission before the tool call); denied is a normal output", async () => {
    const denied = testContext(cwd, { answer: "deny" });
    const out = await toolRunner(denied, ["read_file"])("read_file", { path: "../outside.txt" });
    expect(out).toBe(`fs.read access denied by user for "${join(root, "outside.txt")}".`);
    expect(denied.recorded.events.map((e) => e.kind)).toEqual(["permission", "tool-call"]);
    expect(denied.recorded.events[0]).toEqual({
      kind: "permission",
      request: { toolName: "read_file", operation: "fs.read", resource: join(root, "outside.txt"), reason: "policy-ask", details: undefined },
    });
    expect(denied.recorded.events[1]).toMatchObject({ kind: "tool-call", call: { toolName: "read_file", args: '{"path":"../outside.txt"}' } });

    const allowed = testContext(cwd, { answer: "allow" });
    expect(await toolRunner(allowed, ["read_file"])("read_file", { path: join(root, "outside.txt") })).toContain(`Read ${join(root, "outside.txt")} — lines 1-2 of 2`);
  });

  it("a read inside the cwd does not ask, and announces the call once", async () => {
    const ctx = testContext(cwd);
    await toolRunner(ctx, ["read_file"])("read_file", { path: "./src/../notes.txt" });
    expect(ctx.recorded.events.map((e) => e.kind)).toEqual(["tool-call"]);
  });
});

describe("list_directory", () => {
  it("lists one level, directories with a slash, hidden entries omitted", async () => {
    const out = await toolRunner(testContext(cwd), ["list_directory"])("list_directory", { path: "." });
    expect(out).toBe("Listed . — 5 entries, hidden entries omitted\n\nimage.png\nlines.txt\nnode_modules/\nnotes.txt\nsrc/");
  });

  it("recurses to maxDepth, shows hidden on request, does not expand node_modules", async () => {
    const run = toolRunner(testContext(cwd), ["list_directory"]);
    const deep = await run("list_directory", { path: ".", recursive: true, includeHidden: true });
    expect(deep.split("\n\n")[1]?.split("\n")).toEqual([
      ".env",
      "image.png",
      "lines.txt",
      "node_modules/ (not expanded)",
      "notes.txt",
      "src/",
      "src/a.ts",
      "src/lib/",
      "src/lib/b.ts",
      "src/lib/deep/",
      "src/lib/deep/c.ts",
    ]);
    const shallow = await run("list_directory", { path: "src", recursive: true, maxDepth: 2 });
    expect(shallow).toBe("Listed src — 4 entries, recursive to depth 2, hidden entries omitted\n\na.ts\nlib/\nlib/b.ts\nlib/deep/");
  });

  it("errors on a file or a missing path", async () => {
    const run = toolRunner(testContext(cwd), ["list_directory"]);
    await expect(run("list_directory", { path: "notes.txt" })).rejects.toThrow("notes.txt is a file, not a directory; use read_file");
    await expect(run("list_directory", { path: "missing" })).rejects.toThrow("Not found: missing");
  });
});
