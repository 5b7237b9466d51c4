import { describe, expect, it } from "vitest";
import { commandGlob, fileGlob, GlobError, pathGlob } from "./globs";

const deny = (pattern: string) => pathGlob(pattern, { hidden: true });
const allow = (pattern: string) => pathGlob(pattern, { hidden: false });

describe("glob syntax (picomatch)", () => {
  it("** spans directories, * and ? stay in a segment, classes and alternatives", () => {
    expect(fileGlob("src/**/*.ts")("src/a.ts")).toBe(true);
    expect(fileGlob("src/**/*.ts")("src/x/y/a.ts")).toBe(true);
    expect(fileGlob("src/*.ts")("src/x/a.ts")).toBe(false);
    expect(fileGlob("**/*.{js,json}")("a/b/c.json")).toBe(true);
    expect(fileGlob("file?.[!a-c]x")("file1.dx")).toBe(true);
    expect(fileGlob("file?.[!a-c]x")("file1.ax")).toBe(false);
    expect(fileGlob("a+b(1).txt")("a+b(1).txt")).toBe(true);
    expect(fileGlob("./src/*.ts")("src/a.ts")).toBe(true);
  });

  it("** is a globstar only as a whole segment: inside one it is a *, never crossing /", () => {
    expect(fileGlob("src/**.ts")("src/a.ts")).toBe(true);
    expect(fileGlob("src/**.ts")("src/x/a.ts")).toBe(false);
    expect(fileGlob("a**b")("a/x/b")).toBe(false);
    expect(fileGlob("a**b")("axyb")).toBe(true);
    expect(deny("src/a**b")("src/a/x/b")).toBe(false);
    expect(deny("src/a**b")("src/axb")).toBe(true);
  });

  it("an unclosed {, [ or ( is an error naming the pattern, not closed silently", () => {
    expect(() => fileGlob("*.{js,ts")).toThrow(GlobError);
    expect(() => deny("*.{env,pem")).toThrow('invalid glob "*.{env,pem": "{" is never closed by "}" (write \\{ to match it literally)');
    expect(() => allow("src/[ab")).toThrow('"[" is never closed by "]"');
    expect(() => commandGlob("echo (x")).toThrow('"(" is never closed by ")"');
    expect(fileGlob("a\\{b")("a{b")).toBe(true);
    expect(fileGlob("a}b")("a}b")).toBe(true);
    expect(() => allow("  ")).toThrow("empty glob pattern");
  });

  it("a leading ! and extglobs are literal, not negation", () => {
    expect(deny("!secrets")("src/a.ts")).toBe(false);
    expect(deny("!secrets")("!secrets")).toBe(true);
    expect(fileGlob("+(a|b)")("aa")).toBe(false);
  });
});

describe("hidden files", () => {
  it("the glob tool's * and ** skip hidden names unless the pattern names them", () => {
    expect(fileGlob("*")(".env")).toBe(false);
    expect(fileGlob("**/*.yml")(".github/ci.yml")).toBe(false);
    expect(fileGlob(".github/*.yml")(".github/ci.yml")).toBe(true);
    expect(fileGlob("**/.env")("app/.env")).toBe(true);
  });

  it("deny rules are not weakened: *.env matches .env, ** and dir/** reach into hidden folders", () => {
    expect(deny("*.env")(".env")).toBe(true);
    expect(deny("*.env")("config/.prod.env")).toBe(true);
    expect(deny("**")(".git/config")).toBe(true);
    expect(deny("secrets/**")("secrets/.key")).toBe(true);
    expect(deny("secrets")("secrets/.ssh/id_rsa")).toBe(true);
  });

  it("allow rules do not widen: they reach a hidden name only when the pattern names it", () => {
    expect(allow("*.env")(".env")).toBe(false);
    expect(allow("**")(".git/config")).toBe(false);
    expect(allow("src/**")("src/.env")).toBe(false);
    expect(allow("src")("src/.git/config")).toBe(false);
    expect(allow("src")("src/a/b.ts")).toBe(true);
    expect(allow(".env")(".env")).toBe(true);
    expect(allow(".github")(".github/workflows/ci.yml")).toBe(true);
    expect(allow("/home/u/**")("/home/u/.ssh/id_rsa")).toBe(false);
    expect(allow("/home/u/**")("/home/u/notes.md")).toBe(true);
  });
});

describe("path rules", () => {
  it("a pattern without / matches a name at any depth; with /, the whole path", () => {
    expect(allow("*.env")("config/prod.env")).toBe(true);
    expect(allow("./src/")("src")).toBe(true);
    expect(allow("src/*.ts")("lib/src/a.ts")).toBe(false);
    expect(allow("node_modules")("a/node_modules/x/index.js")).toBe(true);
  });

  it("a directory match covers what is below it; . is the cwd, matched by star-only patterns", () => {
    expect(deny("dist")("dist/a/b.js")).toBe(true);
    expect(deny("/tmp/x/**")("/tmp/x")).toBe(true);
    expect(deny("/tmp/x/*")("/tmp/x/a/b")).toBe(true);
    expect(deny("**")(".")).toBe(true);
    expect(deny("*")(".")).toBe(true);
    expect(deny("**/*")(".")).toBe(true);
    expect(deny(".")(".")).toBe(true);
    expect(deny("src/**")(".")).toBe(false);
    expect(deny("*.env")(".")).toBe(false);
  });
});

describe("command rules", () => {
  it("* matches anything on the command line, / and dots included; the line is trimmed", () => {
    expect(commandGlob("git *")("git log -- src/a.ts")).toBe(true);
    expect(commandGlob("cat *")("cat .env")).toBe(true);
    expect(commandGlob("npm test*")("  npm test -- --run a.test.ts ")).toBe(true);
    expect(commandGlob("git push*")("git status")).toBe(false);
    expect(commandGlob("rm -rf {dist,build}")("rm -rf build")).toBe(true);
  });
});
