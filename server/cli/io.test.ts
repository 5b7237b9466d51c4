import { describe, expect, it } from "vitest";
import { ago, colorsOn, styleFor, table } from "./io";

describe("table", () => {
  const rows = [
    { id: "0196c3f5-7a1b-7c2d-8e3f-0a1b2c3d4e5f", status: "completed", name: "A strategy with a rather long name indeed", path: "/home/someone/code/projects/app" },
    { id: "0196c3f5-7a1b-7c2d-8e3f-0a1b2c3d4e60", status: "failed", name: "Short", path: "/tmp" },
  ];
  const columns = [
    { header: "ID", value: (r: (typeof rows)[number]) => r.id },
    { header: "STATUS", value: (r: (typeof rows)[number]) => r.status },
    { header: "NAME", value: (r: (typeof rows)[number]) => r.name, flex: true },
    { header: "PATH", value: (r: (typeof rows)[number]) => r.path, flex: true, cut: "start" as const },
  ];

  it("fits the width by cutting the flexible columns, the rightmost first; ids stay whole", () => {
    const out = table(rows, columns, { width: 80 });
    const lines = out.trimEnd().split("\n");
    expect(lines).toHaveLength(3);
    for (const l of lines) expect(l.length).toBeLessThanOrEqual(80);
    expect(lines[0]).toMatch(/^ID\s+STATUS\s+NAME\s+PATH$/);
    expect(lines[1]).toContain(rows[0]!.id);
    expect(lines[1]).toMatch(/ …cts\/app$/); // a path keeps its end
    expect(lines[1]).toMatch(/completed {2}A strategy with/);
  });

  it("is as wide as its content when that fits", () => {
    const out = table(rows, columns, { width: 200 });
    expect(out).toContain(rows[0]!.name);
    expect(out).toContain(rows[0]!.path);
  });

  it("colors a cell without breaking the alignment", () => {
    const style = styleFor(true);
    const out = table(rows, [columns[1]!, { ...columns[2]!, paint: (v: string) => style.red(v) }], { width: 80, style });
    const plain = out.replace(new RegExp(`${String.fromCharCode(27)}\\[\\d+m`, "g"), "");
    expect(plain).toBe(table(rows, [columns[1]!, columns[2]!], { width: 80 }));
    expect(out).toContain("\x1b[31mShort\x1b[39m");
  });
});

describe("colors", () => {
  it("only on a terminal, never with NO_COLOR set", () => {
    expect(colorsOn({ write: () => 0, isTTY: true }, {})).toBe(true);
    expect(colorsOn({ write: () => 0, isTTY: false }, {})).toBe(false);
    expect(colorsOn({ write: () => 0 }, {})).toBe(false);
    expect(colorsOn({ write: () => 0, isTTY: true }, { NO_COLOR: "1" })).toBe(false);
    expect(colorsOn({ write: () => 0, isTTY: true }, { NO_COLOR: "" })).toBe(false);
    expect(styleFor(false).red("x")).toBe("x");
  });
});

describe("ago", () => {
  it("says how long ago in one short word", () => {
    const now = Date.parse("2026-01-01T12:00:00Z");
    expect(ago("2026-01-01T11:59:50Z", now)).toBe("10s ago");
    expect(ago("2026-01-01T11:55:00Z", now)).toBe("5m ago");
    expect(ago("2026-01-01T09:00:00Z", now)).toBe("3h ago");
    expect(ago("2025-12-30T12:00:00Z", now)).toBe("2d ago");
    expect(ago(null, now)).toBe("-");
  });
});
