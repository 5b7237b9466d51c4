import { describe, expect, it } from "vitest";
import { splitChunks } from "./markdown-chunks";

describe("splitChunks", () => {
  it("splits at blank lines, never inside a fence", () => {
    expect(splitChunks("a\nb\n\nc\n\n```\nx\n\ny\n```\n\nd")).toEqual(["a\nb", "c", "```\nx\n\ny\n```", "d"]);
  });

  it("an unclosed fence runs to the end (a code block streaming in)", () => {
    expect(splitChunks("intro\n\n```py\nprint(1)\n\nprint(2)")).toEqual(["intro", "```py\nprint(1)\n\nprint(2)"]);
  });

  it("a fence closes only with a bare run of the same character, at least as long", () => {
    expect(splitChunks("````md\n```ts\n\n```\n\nstill code\n````\n\nafter")).toEqual(["````md\n```ts\n\n```\n\nstill code\n````", "after"]);
    expect(splitChunks("~~~\n```\n\n~~~\n\nafter")).toEqual(["~~~\n```\n\n~~~", "after"]);
  });

  it("does not split before an indented continuation (a list item's second paragraph, indented code)", () => {
    expect(splitChunks("- item\n\n  more of the item\n\nnext")).toEqual(["- item\n\n  more of the item", "next"]);
    expect(splitChunks("text\n\n    code 1\n\n    code 2\n\nafter")).toEqual(["text\n\n    code 1\n\n    code 2", "after"]);
  });

  it("keeps a table whole, and CRLF text splits like LF", () => {
    expect(splitChunks("| a | b |\n|---|---|\n| 1 | 2 |\n\nend")).toEqual(["| a | b |\n|---|---|\n| 1 | 2 |", "end"]);
    expect(splitChunks("a\r\n\r\nb")).toEqual(["a", "b"]);
    expect(splitChunks("")).toEqual([]);
  });
});
