import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { ErrorCode } from "../shared/error-schema";
import { ALL_ERROR_CODES, ErrorCodesByDomain, isErrorCode } from "../shared/errors";

const DOC = join(import.meta.dirname, "..", "docs", "ERRORS.md");

/** docs/ERRORS.md as { section -> [code, meaning, action] rows }. */
function documented(): Map<string, string[][]> {
  const sections = new Map<string, string[][]>();
  let section = "";
  for (const line of readFileSync(DOC, "utf8").split("\n")) {
    const heading = /^## (\S+)/.exec(line);
    if (heading) {
      section = heading[1]!;
      sections.set(section, []);
      continue;
    }
    const row = /^\| `([^`]+)` \|(.*)\|\s*$/.exec(line);
    if (!row) continue;
    const cells = row[2]!.split("|").map((c) => c.trim());
    const rows = sections.get(section) ?? [];
    rows.push([row[1]!, ...cells]);
    sections.set(section, rows);
  }
  return sections;
}

describe("error codes (shared/errors.ts)", () => {
  it("belong to one domain each", () => {
    const seen = new Map<string, string>();
    for (const [domain, codes] of Object.entries(ErrorCodesByDomain)) {
      for (const code of codes) {
        expect(seen.get(code), `${code} is in ${seen.get(code)} and ${domain}`).toBeUndefined();
        seen.set(code, domain);
      }
    }
    expect(new Set(ALL_ERROR_CODES).size).toBe(ALL_ERROR_CODES.length);
  });

  it("are UPPER_SNAKE_CASE", () => {
    for (const code of ALL_ERROR_CODES) expect(code).toMatch(/^[A-Z][A-Z0-9]*(_[A-Z0-9]+)*$/);
  });

  it("are each documented once in docs/ERRORS.md, in their domain's section, with a meaning and what to do", () => {
    const doc = documented();
    expect([...doc.keys()]).toEqual(Object.keys(ErrorCodesByDomain));
    const lines = new Map<string, number>();
    for (const [domain, rows] of doc) {
      for (const [code, meaning, action] of rows) {
        lines.set(code!, (lines.get(code!) ?? 0) + 1);
        expect(isErrorCode(code), `docs/ERRORS.md documents ${code}, which no union in shared/errors.ts has`).toBe(true);
        expect((ErrorCodesByDomain as Record<string, readonly string[]>)[domain], `${code} is documented under ${domain}`).toContain(code);
        expect(meaning, `${code}: what it means`).toMatch(/\w{3,}/);
        expect(action, `${code}: what to do`).toMatch(/\w{3,}/);
      }
    }
    for (const code of ALL_ERROR_CODES) expect(lines.get(code), `${code}: one line in docs/ERRORS.md`).toBe(1);
  });

  it("parse as the ErrorCode schema, and nothing else does", () => {
    expect(ErrorCode.parse("DAEMON_QUEUE_FULL")).toBe("DAEMON_QUEUE_FULL");
    expect(ErrorCode.safeParse("NOT_A_CODE").success).toBe(false);
    expect(isErrorCode("NOT_A_CODE")).toBe(false);
    expect(isErrorCode(42)).toBe(false);
  });
});
