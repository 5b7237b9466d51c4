import { mkdirSync, mkdtempSync, rmSync, symlinkSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { EXPORT_KEY_SHAPE, exportResolver, gitExportKey } from "./export-key";

const dir = mkdtempSync(join(tmpdir(), "git-export-key-"));
const repo = join(dir, "repo");
const other = join(dir, "other");
mkdirSync(repo);
mkdirSync(other);
symlinkSync(repo, join(dir, "link"));

afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe("gitExportKey", () => {
  it("is 20 hex characters, the same for every spelling of one directory", () => {
    const key = gitExportKey(repo);
    expect(key).toMatch(/^[0-9a-f]{20}$/);
    expect(EXPORT_KEY_SHAPE.test(key)).toBe(true);
    for (const spelling of [`${repo}/`, join(dir, "link"), join(other, "..", "repo")]) expect(gitExportKey(spelling), spelling).toBe(key);
  });

  it("differs between repositories", () => {
    expect(gitExportKey(other)).not.toBe(gitExportKey(repo));
  });

  it("throws for a path that does not exist", () => {
    expect(() => gitExportKey(join(dir, "missing"))).toThrow();
  });
});

describe("exportResolver", () => {
  it("maps each key to its realpath'd root, and anything else to null", () => {
    const resolve = exportResolver([join(dir, "link"), other]);
    expect(resolve(gitExportKey(repo))).toEqual({ repoPath: repo });
    expect(resolve(gitExportKey(other))).toEqual({ repoPath: other });
    expect(resolve("0123456789abcdef0123")).toBeNull();
  });
});
