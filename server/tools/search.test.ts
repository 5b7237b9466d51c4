import { mkdirSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { tempWorkspace, testContext, toolRunner } from "../testing/tool-context";

let root: string;
let cwd: string;
let run: ReturnType<typeof toolRunner>;

beforeAll(() => {
  root = tempWorkspace("yard-search-");
  cwd = join(root, "work");
  mkdirSync(join(cwd, "src/lib"), { recursive: true });
  mkdirSync(join(cwd, ".github"), { recursive: true });
  mkdirSync(join(cwd, "node_modules/pkg"), { recursive: true });
  writeFileSync(join(cwd, "README.md"), "# Title\nTODO: write docs\n");
  writeFileSync(join(cwd, "src/a.ts"), "export const a = 1;\n// TODO: rename a\n");
  writeFileSync(join(cwd, "src/lib/b.ts"), "export function b() {\n  return 'TODO later';\n}\n");
  writeFileSync(join(cwd, "src/lib/data.json"), '{"todo": true}\n');
  writeFileSync(join(cwd, "src/blob.bin"), Buffer.from([0, 1, 2, 84, 79, 68, 79]));
  writeFileSync(join(cwd, ".github/ci.yml"), "# TODO: cache\n");
  writeFileSync(join(cwd, "node_modules/pkg/index.js"), "// TODO vendored\n");
  writeFileSync(join(root, "secret.txt"), "TODO outside\n");
  symlinkSync(join(root, "secret.txt"), join(cwd, "src/link.txt"));
  run = toolRunner(testContext(cwd), ["glob", "grep"]);
});
afterAll(() => rmSync(root, { recursive: true, force: true }));

describe("glob", () => {
  it("finds files by pattern, as workspace-relative paths, skipping node_modules and hidden files", async () => {
    expect(await run("glob", { pattern: "**/*.ts" })).toBe('Found 2 files matching "**/*.ts"\n\nsrc/a.ts\nsrc/lib/b.ts');
    expect(await run("glob", { pattern: "*.{json,ts}", path: "src/lib" })).toBe('Found 2 files matching "*.{json,ts}" in src/lib\n\nsrc/lib/b.ts\nsrc/lib/data.json');
    expect(await run("glob", { pattern: "*.md" })).toBe('Found 1 file matching "*.md"\n\nREADME.md');
  });

  it("walks hidden directories only when the pattern names them", async () => {
    expect(await run("glob", { pattern: "**/*.yml" })).toBe('Found 0 files matching "**/*.yml"');
    expect(await run("glob", { pattern: ".github/*.yml" })).toBe('Found 1 file matching ".github/*.yml"\n\n.github/ci.yml');
  });

  it("errors on a missing base directory and on a pattern that does not parse", async () => {
    await expect(run("glob", { pattern: "*", path: "nope" })).rejects.toThrow("Not found: nope");
    await expect(run("glob", { pattern: "src/*.{ts,json" })).rejects.toThrow('invalid glob "src/*.{ts,json": "{" is never closed by "}"');
  });
});

describe("search_files", () => {
  it("finds matching lines as path:line: text; skips binary, node_modules, hidden files and symlinks", async () => {
    const out = await run("search_files", { pattern: "TODO" });
    expect(out).toBe(
      "Found 3 matches in 3 files for /TODO/\n\nREADME.md:2: TODO: write docs\nsrc/a.ts:2: // TODO: rename a\nsrc/lib/b.ts:2:   return 'TODO later';",
    );
  });

  it("filters by glob and path, and stops at maxResults", async () => {
    expect(await run("search_files", { pattern: "todo", glob: "*.json" })).toBe('Found 1 match in 1 file for /todo/\n\nsrc/lib/data.json:1: {"todo": true}');
    expect(await run("search_files", { pattern: "export", path: "src/lib" })).toBe("Found 1 match in 1 file for /export/\n\nsrc/lib/b.ts:1: export function b() {");
    expect(await run("search_files", { pattern: "TODO", path: "src/a.ts" })).toContain("src/a.ts:2:");
    const capped = await run("search_files", { pattern: "TODO|export", maxResults: 2 });
    expect(capped.split("\n")[0]).toBe("Found 2 matches in 2 files for /TODO|export/ (stopped at 2; narrow the pattern or raise maxResults)");
  });

  it("an invalid regular expression is a clear error", async () => {
    await expect(run("search_files", { pattern: "(unclosed" })).rejects.toThrow(/^Invalid regular expression "\(unclosed": /);
  });
});
