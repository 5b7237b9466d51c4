import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { tempWorkspace, testContext, toolRunner } from "../testing/tool-context";

let root: string;
let cwd: string;

beforeEach(() => {
  root = tempWorkspace("yard-write-");
  cwd = join(root, "work");
  mkdirSync(cwd);
  writeFileSync(join(cwd, "a.txt"), "alpha beta alpha\n");
});
afterEach(() => rmSync(root, { recursive: true, force: true }));

const names = ["write_file", "create_file", "edit_file", "delete_file", "move_file"];

describe("write tools", () => {
  it("write_file creates (with parents) or replaces, and reports the mutation", async () => {
    const ctx = testContext(cwd);
    const run = toolRunner(ctx, names);
    expect(await run("write_file", { path: "docs/new.md", content: "# New\n" })).toBe("Wrote docs/new.md — 6 bytes (created)");
    expect(await run("write_file", { path: "a.txt", content: "x" })).toBe("Wrote a.txt — 1 bytes (replaced)");
    expect(readFileSync(join(cwd, "docs/new.md"), "utf8")).toBe("# New\n");
    expect(ctx.recorded.mutations).toEqual([
      { toolName: "write_file", operation: "fs.write", path: join(cwd, "docs/new.md"), details: { bytes: 6, created: true } },
      { toolName: "write_file", operation: "fs.write", path: join(cwd, "a.txt"), details: { bytes: 1, created: false } },
    ]);
  });

  it("create_file fails when the file exists", async () => {
    const run = toolRunner(testContext(cwd), names);
    expect(await run("create_file", { path: "b.txt", content: "b" })).toBe("Created b.txt — 1 bytes");
    await expect(run("create_file", { path: "a.txt", content: "x" })).rejects.toThrow("a.txt already exists; use write_file to replace it or edit_file to change it");
    expect(readFileSync(join(cwd, "a.txt"), "utf8")).toBe("alpha beta alpha\n");
  });

  it("edit_file replaces exactly one occurrence, or all with replaceAll", async () => {
    const run = toolRunner(testContext(cwd), names);
    await expect(run("edit_file", { path: "a.txt", oldText: "alpha", newText: "A" })).rejects.toThrow(
      "oldText occurs 2 times in a.txt; add surrounding context to make it unique, or pass replaceAll: true",
    );
    await expect(run("edit_file", { path: "a.txt", oldText: "gamma", newText: "G" })).rejects.toThrow("oldText was not found in a.txt");
    expect(await run("edit_file", { path: "a.txt", oldText: "beta", newText: "$& B" })).toBe("Edited a.txt — replaced 1 occurrence, now 17 bytes");
    expect(readFileSync(join(cwd, "a.txt"), "utf8")).toBe("alpha $& B alpha\n");
    expect(await run("edit_file", { path: "a.txt", oldText: "alpha", newText: "A", replaceAll: true })).toBe("Edited a.txt — replaced 2 occurrences, now 9 bytes");
    expect(readFileSync(join(cwd, "a.txt"), "utf8")).toBe("A $& B A\n");
    await expect(run("edit_file", { path: "missing.txt", oldText: "x", newText: "y" })).rejects.toThrow("Not found: missing.txt");
  });

  it("delete_file deletes a file, not a directory", async () => {
    mkdirSync(join(cwd, "dir"));
    const ctx = testContext(cwd);
    const run = toolRunner(ctx, names);
    expect(await run("delete_file", { path: "a.txt" })).toBe("Deleted a.txt");
    expect(existsSync(join(cwd, "a.txt"))).toBe(false);
    await expect(run("delete_file", { path: "dir" })).rejects.toThrow("dir is a directory; delete_file deletes files");
    await expect(run("delete_file", { path: "a.txt" })).rejects.toThrow("Not found: a.txt");
    expect(ctx.recorded.mutations).toHaveLength(1);
  });

  it("move_file moves into new directories and refuses to overwrite", async () => {
    writeFileSync(join(cwd, "c.txt"), "c");
    const ctx = testContext(cwd);
    const run = toolRunner(ctx, names);
    expect(await run("move_file", { from: "a.txt", to: "sub/b.txt" })).toBe("Moved a.txt to sub/b.txt");
    expect(readFileSync(join(cwd, "sub/b.txt"), "utf8")).toBe("alpha beta alpha\n");
    await expect(run("move_file", { from: "c.txt", to: "sub/b.txt" })).rejects.toThrow("sub/b.txt already exists");
    await expect(run("move_file", { from: "gone.txt", to: "x.txt" })).rejects.toThrow("Not found: gone.txt");
    expect(ctx.recorded.mutations).toEqual([{ toolName: "move_file", operation: "fs.write", path: join(cwd, "sub/b.txt"), details: { from: join(cwd, "a.txt") } }]);
  });

  it("a write outside the cwd asks; a denied one changes nothing and says so", async () => {
    const ctx = testContext(cwd, { answer: "deny" });
    const run = toolRunner(ctx, names);
    const out = await run("write_file", { path: "../escape.txt", content: "x" });
    expect(out).toBe(`fs.write access denied by user for "${join(root, "escape.txt")}".`);
    expect(existsSync(join(root, "escape.txt"))).toBe(false);
    expect(ctx.recorded.events.map((e) => e.kind)).toEqual(["permission", "tool-call"]);
    expect(ctx.recorded.mutations).toEqual([]);

    // move_file checks both ends: moving a workspace file outside asks once, for the destination.
    const moved = await run("move_file", { from: "a.txt", to: "../out.txt" });
    expect(moved).toBe(`fs.write access denied by user for "${join(root, "out.txt")}".`);
    expect(existsSync(join(cwd, "a.txt"))).toBe(true);
  });

  it("a policy deny needs no human", async () => {
    const ctx = testContext(cwd);
    ctx.policy.update({ mode: "write", deny: ["*.lock"] });
    const out = await toolRunner(ctx, names)("write_file", { path: "deps.lock", content: "x" });
    expect(out).toBe(`fs.write access denied for "${join(cwd, "deps.lock")}".`);
    expect(ctx.recorded.events.map((e) => e.kind)).toEqual(["tool-call"]);
  });
});
