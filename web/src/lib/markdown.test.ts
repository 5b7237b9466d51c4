import { describe, expect, it } from "vitest";
import { parseBlocks, parseInline, safeHref, splitChunks } from "./markdown";

describe("parseBlocks", () => {
  it("reads headings, paragraphs, rules and quotes", () => {
    expect(parseBlocks("# Title\n\nOne line\nnext line\n\n---\n> quoted *text*")).toEqual([
      { t: "heading", level: 1, text: "Title" },
      { t: "paragraph", text: "One line\nnext line" },
      { t: "hr" },
      { t: "quote", children: [{ t: "paragraph", text: "quoted *text*" }] },
    ]);
  });

  it("reads fenced code, and an unclosed fence (still streaming) as code up to the end", () => {
    expect(parseBlocks("```ts\nconst a = 1;\n```\nafter")).toEqual([
      { t: "code", lang: "ts", text: "const a = 1;", open: false },
      { t: "paragraph", text: "after" },
    ]);
    expect(parseBlocks("text\n```\nline 1\nline 2")).toEqual([
      { t: "paragraph", text: "text" },
      { t: "code", lang: "", text: "line 1\nline 2", open: true },
    ]);
  });

  it("reads ordered and unordered lists, nested by indentation", () => {
    const [list] = parseBlocks("1. first\n2. second\n   - nested a\n   - nested b\n3. third");
    expect(list).toMatchObject({ t: "list", ordered: true, start: 1, tight: true });
    if (list?.t !== "list") throw new Error("not a list");
    expect(list.items).toHaveLength(3);
    expect(list.items[1]).toEqual([
      { t: "paragraph", text: "second" },
      { t: "list", ordered: false, start: 1, tight: true, items: [[{ t: "paragraph", text: "nested a" }], [{ t: "paragraph", text: "nested b" }]] },
    ]);
    expect(parseBlocks("- a\n- b\n\nafter")).toEqual([
      { t: "list", ordered: false, start: 1, tight: true, items: [[{ t: "paragraph", text: "a" }], [{ t: "paragraph", text: "b" }]] },
      { t: "paragraph", text: "after" },
    ]);
  });

  it("keeps raw HTML as text", () => {
    expect(parseBlocks("<script>alert(1)</script>")).toEqual([{ t: "paragraph", text: "<script>alert(1)</script>" }]);
  });
});

describe("parseInline", () => {
  it("reads code, bold, italic and escapes", () => {
    expect(parseInline("a `b*c*` **bold _it_** \\*no\\*")).toEqual([
      { t: "text", text: "a " },
      { t: "code", text: "b*c*" },
      { t: "text", text: " " },
      { t: "strong", children: [{ t: "text", text: "bold " }, { t: "em", children: [{ t: "text", text: "it" }] }] },
      { t: "text", text: " *no*" },
    ]);
  });

  it("leaves an unclosed marker (mid-stream) as text, and snake_case alone", () => {
    expect(parseInline("**bold so far")).toEqual([{ t: "text", text: "**bold so far" }]);
    expect(parseInline("my_var_name")).toEqual([{ t: "text", text: "my_var_name" }]);
  });

  it("makes links of http(s) and mailto only", () => {
    expect(parseInline("[docs](https://example.com/a) and https://x.dev/b.")).toEqual([
      { t: "link", href: "https://example.com/a", children: [{ t: "text", text: "docs" }] },
      { t: "text", text: " and " },
      { t: "link", href: "https://x.dev/b", children: [{ t: "text", text: "https://x.dev/b" }] },
      { t: "text", text: "." },
    ]);
    expect(parseInline("[click](javascript:alert(1))")).toEqual([{ t: "text", text: "click" }, { t: "text", text: ")" }]);
    expect(safeHref("data:text/html,x")).toBeUndefined();
    expect(safeHref("mailto:a@b.c")).toBe("mailto:a@b.c");
  });

  it("turns newlines into line breaks", () => {
    expect(parseInline("a\nb")).toEqual([{ t: "text", text: "a" }, { t: "br" }, { t: "text", text: "b" }]);
  });
});

describe("splitChunks", () => {
  it("splits at blank lines, but not inside a code fence", () => {
    expect(splitChunks("a\nb\n\nc\n\n```\nx\n\ny\n```\n\nd")).toEqual(["a\nb", "c", "```\nx\n\ny\n```", "d"]);
  });
  it("keeps an unclosed fence (still streaming) as one chunk", () => {
    expect(splitChunks("intro\n\n```py\nprint(1)\n\nprint(2)")).toEqual(["intro", "```py\nprint(1)\n\nprint(2)"]);
  });
});
